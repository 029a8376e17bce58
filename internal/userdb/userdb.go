// Package userdb reads the local user database, /etc/passwd and
// /etc/group, as colon-separated lines. The launcher is linked statically
// and loads no NSS module (cmd/launcher/static_linux.go), so users and
// groups only a directory service (LDAP, sssd) knows are not seen; every
// caller errs toward less (fewer groups given, fewer ids taken as used,
// fewer homes refused by policy init than the system has).
package userdb

import (
	"os"
	"strings"
)

// Entry is one line's fields: for /etc/passwd name, password, uid, gid,
// comment, home, shell; for /etc/group name, password, gid, members.
type Entry []string

// Field is the entry's i-th field, or "" when it has fewer.
func (e Entry) Field(i int) string {
	if i < len(e) {
		return e[i]
	}
	return ""
}

// Read returns the entries of a file in that format; none when it cannot
// be read.
func Read(path string) []Entry {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []Entry
	for line := range strings.Lines(string(b)) {
		if line = strings.TrimRight(line, "\n"); line != "" {
			out = append(out, strings.Split(line, ":"))
		}
	}
	return out
}

// Passwd and Group are the system's files.
func Passwd() []Entry { return Read("/etc/passwd") }
func Group() []Entry  { return Read("/etc/group") }
