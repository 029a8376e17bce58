// Package jsonkeys checks JSON text for what encoding/json reads
// otherwise than a careful reader: the files the site is built from
// (register evidence, bench reports) come from other machines, and a
// file that reads one way in the site and another in jq or Python is a
// way to show an auditor one thing and publish another.
package jsonkeys

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxDepth bounds the nesting Check accepts: evidence is four deep, a
// bench report three.
const MaxDepth = 32

// Check refuses JSON text that encoding/json would read other
// than a careful reader does: an object naming a key twice (the decoder
// keeps the last), a key not in lower case (the decoder matches field
// names regardless of case, so "RESULTS" would stand for "results"), or
// anything after the first value.
//
// It refuses nesting deeper than MaxDepth: it keeps a map for each
// open object, and 16 MiB of {"a":[ took 900 MB.
func Check(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	// Each open object's keys; nil for an open array.
	var stack []map[string]bool
	expectKey := func() bool { return len(stack) > 0 && stack[len(stack)-1] != nil }
	key := true // the next string in an object is a key
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if len(stack) == MaxDepth {
					return fmt.Errorf("nested deeper than %d levels (the launcher writes 4)", MaxDepth)
				}
				if t == '{' {
					stack = append(stack, map[string]bool{})
					key = true
				} else {
					stack = append(stack, nil)
				}
			default:
				stack = stack[:len(stack)-1]
				key = expectKey()
			}
			if len(stack) == 0 && dec.More() {
				return errors.New("data after the first JSON value")
			}
			continue
		case string:
			if expectKey() && key {
				seen := stack[len(stack)-1]
				if t != strings.ToLower(t) {
					return fmt.Errorf("key %q is not in lower case (a decoder would take it for %q)", t, strings.ToLower(t))
				}
				if seen[t] {
					return fmt.Errorf("key %q appears twice in one object (a decoder keeps the last)", t)
				}
				seen[t] = true
				key = false
				continue
			}
		}
		// A value: in an object, the next string is a key again.
		key = expectKey()
	}
	return nil
}
