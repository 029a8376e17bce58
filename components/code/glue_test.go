package code

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"modernc.org/quickjs"
)

var updateGlue = flag.Bool("update-glue", false, "rewrite isoglue.bc from isoGlue")

// The embedded bytecode is what isoGlue compiles to with this QuickJS:
// an edit of isoGlue, or a QuickJS whose bytecode differs, fails here
// until `go test ./components/code -run TestGlueBytecode -update-glue`
// rewrites isoglue.bc.
func TestGlueBytecode(t *testing.T) {
	vm, err := quickjs.NewVM()
	if err != nil {
		t.Fatal(err)
	}
	defer vm.Close()
	want, err := vm.Compile(isoGlue, quickjs.EvalGlobal)
	if err != nil {
		t.Fatal(err)
	}
	if *updateGlue {
		if err := os.WriteFile("isoglue.bc", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(isoGlueBytecode, want) {
		t.Fatalf("isoglue.bc (%d bytes) is not what isoGlue compiles to now (%d bytes); run: go test ./components/code -run TestGlueBytecode -update-glue", len(isoGlueBytecode), len(want))
	}
}
