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
	needle, err := hex.DecodeString(args[0])
	if err != nil || len(needle) == 0 {
		broke(fmt.Errorf("find-bytes: %q is not a hex string", args[0]))
	}
	read := 0
	check := func(path string) {
		f, err := os.Open(path)
		if err != nil {
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(io.LimitReader(f, scanMaxBytes))
		read++
		if bytes.Contains(b, needle) {
			fmt.Printf("found %s\n", path)
			os.Exit(1)
		}
	}
	for _, root := range args[1:] {
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
			if d.Type().IsRegular() || (path == root && d.Type()&fs.ModeSymlink == 0) {
				check(path)
			}
			return nil
		})
	}
	fmt.Printf("absent %d\n", read)
	os.Exit(0)
}
