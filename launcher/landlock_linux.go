package launcher

import ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

// Access rights the launcher grants, as Landlock bits.
const (
	accessRead  = ll.AccessFSReadFile | ll.AccessFSReadDir
	accessExec  = accessRead | ll.AccessFSExecute
	accessWrite = accessRead | ll.AccessFSWriteFile | ll.AccessFSTruncate |
		ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeDir |
		ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo |
		ll.AccessFSMakeSym | ll.AccessFSRefer
	// Rights Landlock accepts on a file (not a directory) rule.
	accessFileOnly = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate |
		ll.AccessFSExecute | ll.AccessFSIoctlDev
)
