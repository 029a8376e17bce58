//go:build linux && cgo

package launcher

import (
	"fmt"

	seccomp "github.com/seccomp/libseccomp-golang"
)

// libseccompVersion reports the libseccomp the launcher is linked with and
// the API level it detects on this kernel.
func libseccompVersion() (string, error) {
	major, minor, micro := seccomp.GetLibraryVersion()
	v := fmt.Sprintf("%d.%d.%d", major, minor, micro)
	if major < 2 || major == 2 && minor < 5 {
		return v, fmt.Errorf("libseccomp %s is older than 2.5", v)
	}
	return v, nil
}
