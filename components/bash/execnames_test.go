package bash

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"
)

// TestExecOptionNames holds execOptionNames to the programs execOption
// has cases for: a program given a rule there and left out of the list
// would take the words xargs adds without approval.
func TestExecOptionNames(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "execopt.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "execOption" {
			continue
		}
		for _, st := range fn.Body.List {
			sw, ok := st.(*ast.SwitchStmt)
			if !ok {
				continue
			}
			for _, cc := range sw.Body.List {
				for _, e := range cc.(*ast.CaseClause).List {
					lit, ok := e.(*ast.BasicLit)
					if !ok {
						continue
					}
					name, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					n++
					if !execOptionProgram(name) {
						t.Errorf("execOption has a case for %q, which execOptionNames leaves out", name)
					}
				}
			}
		}
	}
	if n < 100 {
		t.Fatalf("found %d of execOption's cases; the test no longer reads them", n)
	}
}
