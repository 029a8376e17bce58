// Mapping the launcher's own image at start, in one system call.
//
// Every launcher process (stage 1, each component, each Code Mode worker,
// each `launcher fs` the agent runs) is this 27 MB executable, and its Go
// runtime and package initialisation touch code and read-only data all
// over it: several hundred page faults, each a trap into the kernel that
// maps at most a few pages it already holds in the page cache. Asking the
// kernel to map the read-only segments at once (MADV_POPULATE_READ, Linux
// 5.14) does the same work without the traps: on 2026-12-01's VM, where a
// fault is dear, `launcher --help` went from about 650 faults and 25 ms of
// CPU to 480 and 21. It is only an optimisation: on an older kernel, or
// if anything fails, the pages are faulted in on use as before. Nothing
// is read that the process would not map anyway; writable segments are
// left alone (populating them would copy them).
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "stage2_linux.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

static int populate_main(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	if (page == 0 || page == (uintptr_t)-1)
		return 1;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W))
			continue;
		uintptr_t start = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
		uintptr_t end = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + page - 1) & ~(page - 1);
		(void)madvise((void *)start, end - start, MADV_POPULATE_READ);
	}
	// The first object listed is the executable itself: stop there.
	return 1;
}

void pf_populate_image(void)
{
	(void)dl_iterate_phdr(populate_main, NULL);
}
