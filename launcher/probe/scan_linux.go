package probe

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Bounds on a find-bytes walk.
const (
	scanMaxFiles = 50_000
	scanMaxBytes = 8 << 20 // read of each file
)

// findBytes looks for the bytes hex names in every file beneath each root
// it can read (symlinks not followed, /proc and /sys entered only when
// named as a root or a file in them, so /proc/self/environ can be asked
// for). It prints `found PATH` and exits 1 at the first match, or prints
// `absent N` (N files read) and exits 0. The needle comes in hex, so the
// probe's own argv does not hold it.
func findBytes(args []string) {
	needle := hexNeedle(args[0])
	if found, read := scan(needle, args[1:]); found != "" {
		fmt.Printf("found %s\n", found)
		os.Exit(1)
	} else {
		fmt.Printf("absent %d\n", read)
		os.Exit(0)
	}
}

// secretHunt is the agent after a secret it should never hold: it GETs
// url through the proxy (an upstream of its own that echoes what it
// receives), then looks for the bytes in the answer and beneath the
// roots, as find-bytes does. A root may name the agent's environment
// ($PINFOLD_CREDENTIALS/ca.pem: a directory it cannot list). It prints `found WHERE` and exits 1, or
// `absent N; ANSWER` (ANSWER as http-get prints it) and exits 0.
func secretHunt(args []string) {
	needle := hexNeedle(args[0])
	resp, body := fetch(args[1])
	answer := answerLine(resp, body)
	if bytes.Contains(body, needle) || bytes.Contains([]byte(fmt.Sprint(resp.Header)), needle) {
		fmt.Printf("found the answer from %s\n", args[1])
		os.Exit(1)
	}
	var roots []string
	for _, r := range args[2:] {
		roots = append(roots, os.ExpandEnv(r))
	}
	if found, read := scan(needle, roots); found != "" {
		fmt.Printf("found %s\n", found)
		os.Exit(1)
	} else {
		fmt.Printf("absent %d; %s\n", read, answer)
		os.Exit(0)
	}
}

// hexNeedle decodes the needle, failing the probe when it is not hex.
func hexNeedle(h string) []byte {
	needle, err := hex.DecodeString(h)
	if err != nil || len(needle) == 0 {
		broke(fmt.Errorf("%q is not a hex string", h))
	}
	return needle
}

// scan looks for needle beneath roots: the first file holding it, or ""
// and how many files it read.
func scan(needle []byte, roots []string) (found string, read int) {
	check := func(path string) bool {
		f, err := os.Open(path)
		if err != nil {
			return false
		}
		defer f.Close()
		b, _ := io.ReadAll(io.LimitReader(f, scanMaxBytes))
		read++
		return bytes.Contains(b, needle)
	}
	for _, root := range roots {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable: the agent cannot see it either
			}
			if read >= scanMaxFiles {
				return filepath.SkipAll
			}
			if d.IsDir() {
				if path != root && (path == "/proc" || path == "/sys" || path == "/dev") {
					return filepath.SkipDir
				}
				return nil
			}
			if (d.Type().IsRegular() || (path == root && d.Type()&fs.ModeSymlink == 0)) && check(path) {
				found = path
				return filepath.SkipAll
			}
			return nil
		})
		if found != "" {
			return found, read
		}
	}
	return "", read
}
