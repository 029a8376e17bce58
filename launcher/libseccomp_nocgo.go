//go:build linux && !cgo

package launcher

import "errors"

// libseccompVersion: without cgo the launcher has no libseccomp.
func libseccompVersion() (string, error) {
	return "", errors.New("the launcher was built without cgo, so without libseccomp")
}
