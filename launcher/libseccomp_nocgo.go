//go:build linux && !cgo

package launcher

import "errors"

// libseccompVersion: without cgo the launcher has no libseccomp.
func libseccompVersion() (string, error) {
	return "", errors.New("the launcher was built without cgo, so without libseccomp")
}

// BuildSeccomp: without cgo there is no libseccomp to compile the filter,
// and a launch without seccomp is refused.
func BuildSeccomp(SeccompSpec) (SeccompProgram, error) {
	return SeccompProgram{}, errors.New("the launcher was built without cgo, so without libseccomp: rebuild with CGO_ENABLED=1")
}
