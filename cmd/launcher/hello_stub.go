package main

import "fmt"

const helloHelp = "Usage: launcher hello [--json] [--policy FILE]\n"

func (e env) hello(args []string) error {
	fset := flags("hello")
	if _, err := e.parse(fset, helloHelp, args, 0); err != nil {
		return err
	}
	return fmt.Errorf("hello: not yet")
}
