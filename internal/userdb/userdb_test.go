package userdb

import (
	"os"
	"path/filepath"
	"testing"
)

// Lines are split at colons, blank lines skipped, a missing field is "",
// and a file that cannot be read has no entries.
func TestRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(path, []byte("root:x:0:0:root:/root:/bin/sh\n\nshort:x\nlast:x:7:7::/home/last:/bin/sh"), 0o644); err != nil {
		t.Fatal(err)
	}
	es := Read(path)
	if len(es) != 3 || es[0].Field(5) != "/root" || es[1].Field(2) != "" || es[2].Field(0) != "last" || es[2].Field(6) != "/bin/sh" {
		t.Fatalf("entries %q", es)
	}
	if Read(filepath.Join(t.TempDir(), "missing")) != nil {
		t.Error("a missing file has entries")
	}
	if len(Passwd()) == 0 || Passwd()[0].Field(0) == "" {
		t.Error("this host's /etc/passwd reads as empty")
	}
}
