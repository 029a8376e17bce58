#include "textflag.h"

// func int80getpid() int64
// The i386 system call getpid (20) through the legacy int $0x80 gate.
TEXT ·int80getpid(SB),NOSPLIT,$0-8
	MOVQ $20, AX
	INT $0x80
	MOVQ AX, ret+0(FP)
	RET
