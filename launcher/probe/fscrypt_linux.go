package probe

import (
	"encoding/hex"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The file system's encryption keyring (fscrypt, v2 policies): a key is
// added by a uid and removed by it; removing it locks every directory it
// unlocks, on the whole file system, whichever descriptor the call is made
// on.

// fscryptAdd adds a fixed test key to DIR's file system as this uid, sets
// a v2 policy with it on DIR (which must be empty), and prints `id HEX`,
// the key's identifier.
func fscryptAdd(dir string) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		broke(setupErr("open "+dir, err))
	}
	const rawSize = 64
	buf := make([]byte, unsafe.Sizeof(unix.FscryptAddKeyArg{})+rawSize)
	arg := (*unix.FscryptAddKeyArg)(unsafe.Pointer(&buf[0]))
	arg.Key_spec.Type = unix.FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER
	arg.Raw_size = rawSize
	for i := range rawSize {
		buf[unsafe.Sizeof(*arg)+uintptr(i)] = 0x42
	}
	if err := ioctlPtr(fd, unix.FS_IOC_ADD_ENCRYPTION_KEY, unsafe.Pointer(arg)); err != nil {
		broke(setupErr("FS_IOC_ADD_ENCRYPTION_KEY", err))
	}
	pol := unix.FscryptPolicyV2{
		Version:                   unix.FSCRYPT_POLICY_V2,
		Contents_encryption_mode:  unix.FSCRYPT_MODE_AES_256_XTS,
		Filenames_encryption_mode: unix.FSCRYPT_MODE_AES_256_CTS,
		Flags:                     unix.FSCRYPT_POLICY_FLAGS_PAD_32,
	}
	copy(pol.Master_key_identifier[:], arg.Key_spec.U[:16])
	if err := ioctlPtr(fd, unix.FS_IOC_SET_ENCRYPTION_POLICY, unsafe.Pointer(&pol)); err != nil {
		broke(setupErr("FS_IOC_SET_ENCRYPTION_POLICY", err))
	}
	fmt.Printf("id %s\n", hex.EncodeToString(pol.Master_key_identifier[:]))
	os.Exit(0)
}

// fscryptRemove removes this uid's claim to key ID (hex) with a descriptor
// of PATH, any file on that file system.
func fscryptRemove(path, id string) error {
	b, err := hex.DecodeString(id)
	if err != nil || len(b) != 16 {
		return fmt.Errorf("key identifier %q: want 32 hex digits", id)
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return setupErr("open "+path, err)
	}
	defer unix.Close(fd)
	var arg unix.FscryptRemoveKeyArg
	arg.Key_spec.Type = unix.FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER
	copy(arg.Key_spec.U[:], b)
	return ioctlPtr(fd, unix.FS_IOC_REMOVE_ENCRYPTION_KEY, unsafe.Pointer(&arg))
}

func ioctlPtr(fd int, req uint, arg unsafe.Pointer) error {
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg)); e != 0 {
		return e
	}
	return nil
}
