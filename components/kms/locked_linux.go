package kms

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// lockedAlloc maps size bytes (at least one page) that are locked in RAM
// (never swapped), left out of core dumps, and wiped in any child a fork
// makes. Failing any of these is an error, never a weaker store.
func lockedAlloc(size int) ([]byte, error) {
	page := unix.Getpagesize()
	n := (size + page - 1) / page * page
	if n == 0 {
		n = page
	}
	mem, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("kms: map %d bytes: %w", n, err)
	}
	for _, step := range []struct {
		what string
		do   func() error
	}{
		{"lock in memory (RLIMIT_MEMLOCK?)", func() error { return unix.Mlock(mem) }},
		{"exclude from core dumps", func() error { return unix.Madvise(mem, unix.MADV_DONTDUMP) }},
		{"wipe on fork", func() error { return unix.Madvise(mem, unix.MADV_WIPEONFORK) }},
	} {
		if err := step.do(); err != nil {
			unix.Munmap(mem)
			return nil, fmt.Errorf("kms: %s %d bytes: %w", step.what, n, err)
		}
	}
	return mem[:size], nil
}

func lockedFree(mem []byte) error {
	mem = mem[:cap(mem)]
	if err := unix.Munlock(mem); err != nil {
		return fmt.Errorf("kms: unlock: %w", err)
	}
	if err := unix.Munmap(mem); err != nil {
		return fmt.Errorf("kms: unmap: %w", err)
	}
	return nil
}
