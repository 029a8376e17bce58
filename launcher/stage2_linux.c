// Stage 2: the process stage 1 cloned into new namespaces. It reads the
// plan, confines itself in the order of DESIGN.md §3, starts the agent as
// its only child and stays the pid namespace's init. Why it is C and runs
// before the Go runtime starts: see stage2_cgo_linux.go.
//
// Everything here is single-threaded, and every step fails closed: the
// first error is reported to stage 1 ("error: STEP: WHAT") and stage 2
// exits without starting anything.

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "stage2_linux.h"

// System calls and constants newer than some C libraries' headers. The
// numbers are the same on every architecture (they were added after the
// tables were unified).
enum {
	pf_sys_open_tree = 428,
	pf_sys_move_mount = 429,
	pf_sys_fsopen = 430,
	pf_sys_fsconfig = 431,
	pf_sys_fsmount = 432,
	pf_sys_close_range = 436,
	pf_sys_openat2 = 437,
	pf_sys_mount_setattr = 442,
	pf_sys_landlock_create_ruleset = 444,
	pf_sys_landlock_add_rule = 445,
	pf_sys_landlock_restrict_self = 446,
};

#define PF_OPEN_TREE_CLONE 1u
#define PF_AT_RECURSIVE 0x8000u
#define PF_MOUNT_ATTR_RDONLY 0x1ull
#define PF_MOUNT_ATTR_NOSUID 0x2ull
#define PF_MOUNT_ATTR_NODEV 0x4ull
#define PF_MOUNT_ATTR_NOEXEC 0x8ull
#define PF_MOUNT_ATTR_IDMAP 0x100000ull
#define PF_MOVE_MOUNT_F_EMPTY_PATH 0x4u
#define PF_MOVE_MOUNT_T_EMPTY_PATH 0x40u
#define PF_FSOPEN_CLOEXEC 1u
#define PF_FSCONFIG_SET_STRING 1u
#define PF_FSCONFIG_CMD_CREATE 6u
#define PF_FSMOUNT_CLOEXEC 1u
#define PF_RESOLVE_NO_MAGICLINKS 0x2ull
#define PF_RESOLVE_NO_SYMLINKS 0x4ull
#define PF_CLOSE_RANGE_CLOEXEC (1u << 2)
#define PF_LANDLOCK_RULE_PATH_BENEATH 1
#define PF_LANDLOCK_RULE_NET_PORT 2

struct pf_mount_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

struct pf_open_how {
	uint64_t flags, mode, resolve;
};

// Landlock's ruleset attribute at ABI 6. Older kernels accept the larger
// struct as long as the fields they do not know are zero, which the plan
// guarantees (stage 1 chose the ABI).
struct pf_ruleset_attr {
	uint64_t handled_access_fs, handled_access_net, scoped;
};

struct pf_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct pf_net_port {
	uint64_t allowed_access, port;
};

enum { max_plan = 4 << 20 };

// fail_status reports the failed step to stage 1 and exits with status.
static void __attribute__((noreturn, format(printf, 3, 4)))
fail_status(int status, const char *step, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	dprintf(PF_FD_REPORT, "error: %s: %s\n", step, msg);
	_exit(status);
}

// fail reports the failed step to stage 1 and exits.
#define fail(...) fail_status(PF_EXIT_FAILED, __VA_ARGS__)

#define E strerror(errno)

// ---- the plan ----

struct reader {
	const unsigned char *p, *end;
	const char *err; // the first problem, or NULL
	struct plan *plan;
};

struct block {
	struct block *next;
	max_align_t data[];
};

static int need(struct reader *r, size_t n)
{
	if (r->err)
		return 0;
	if ((size_t)(r->end - r->p) < n) {
		r->err = "truncated plan";
		return 0;
	}
	return 1;
}

static uint64_t get(struct reader *r, int bytes)
{
	uint64_t v = 0;
	if (!need(r, bytes))
		return 0;
	for (int i = 0; i < bytes; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += bytes;
	return v;
}

static uint32_t get_u32(struct reader *r) { return (uint32_t)get(r, 4); }
static uint64_t get_u64(struct reader *r) { return get(r, 8); }

static int get_flag(struct reader *r)
{
	uint64_t v = get(r, 1);
	if (v > 1 && !r->err)
		r->err = "flag is neither 0 nor 1";
	return (int)v;
}

// get_count reads a list's length: each item takes at least min bytes, so
// a count the rest of the plan cannot hold is refused before allocating.
static uint32_t get_count(struct reader *r, size_t min)
{
	uint32_t n = get_u32(r);
	if (!r->err && (size_t)n > (size_t)(r->end - r->p) / min) {
		r->err = "list longer than the plan";
		return 0;
	}
	return n;
}

static void *alloc(struct reader *r, size_t n, size_t size)
{
	if (r->err)
		return NULL;
	// n+1 items: never zero bytes, and argv and env end in NULL. n*size
	// cannot overflow: n is bounded by the plan's length.
	struct block *b = calloc(1, sizeof *b + (n + 1) * size);
	if (!b) {
		r->err = "out of memory";
		return NULL;
	}
	b->next = r->plan->mem;
	r->plan->mem = b;
	return b->data;
}

void pf_free_plan(struct plan *p)
{
	while (p->mem) {
		struct block *b = p->mem;
		p->mem = b->next;
		free(b);
	}
}

static char *get_str(struct reader *r)
{
	uint32_t n = get_u32(r);
	if (!need(r, n))
		return NULL;
	if (memchr(r->p, 0, n)) {
		r->err = "string holds a NUL byte";
		return NULL;
	}
	char *s = alloc(r, n, 1);
	if (!s)
		return NULL;
	memcpy(s, r->p, n);
	r->p += n;
	return s;
}

static char **get_strs(struct reader *r, uint32_t *count)
{
	uint32_t n = get_count(r, 4);
	char **v = alloc(r, n, sizeof *v);
	for (uint32_t i = 0; v && i < n && !r->err; i++)
		v[i] = get_str(r);
	if (count)
		*count = n;
	return v;
}

static int get_magic(struct reader *r, const char *magic)
{
	size_t n = strlen(magic);
	if (!need(r, n))
		return 0;
	if (memcmp(r->p, magic, n) != 0) {
		r->err = "not a plan from this launcher";
		return 0;
	}
	r->p += n;
	return 1;
}

// check records what is wrong when ok is not, unless something was.
static void check(struct reader *r, int ok, const char *err)
{
	if (!ok && !r->err)
		r->err = err;
}

// The limits the policy sets, in the ranges its validation lets through
// (checkLimits in policy/validate.go). The policy's "0" is "unlimited",
// which the plan writes as RLIM_INFINITY: a limit of 0 is never the
// policy's.
static const struct {
	int resource;
	uint64_t min, max;
	const char *err;
} policy_limits[] = {
	{RLIMIT_NOFILE, 16, 1 << 20, "RLIMIT_NOFILE is not 16 to 2^20 (limits.open_files)"},
	{RLIMIT_NPROC, 1, 4194304, "RLIMIT_NPROC is not 1 to 4194304 (limits.processes)"},
	{RLIMIT_FSIZE, 1, UINT64_MAX, "RLIMIT_FSIZE is 0 (limits.file_size \"0\" is unlimited)"},
	{RLIMIT_CPU, 1, UINT64_MAX, "RLIMIT_CPU is 0 (limits.cpu_time \"0\" is unlimited)"},
	{RLIMIT_AS, 1, UINT64_MAX, "RLIMIT_AS is 0 (limits.memory \"0\" is unlimited)"},
};

// rlimit_error says what is wrong with the plan's limit i, or NULL.
static const char *rlimit_error(const struct plan *p, uint32_t i)
{
	const struct rlim *l = &p->rlimits[i];
	if (l->resource >= RLIM_NLIMITS)
		return "a limit of a resource that does not exist";
	for (uint32_t j = 0; j < i; j++)
		if (p->rlimits[j].resource == l->resource)
			return "a resource limited twice";
	for (size_t j = 0; j < sizeof policy_limits / sizeof policy_limits[0]; j++)
		if (policy_limits[j].resource == (int)l->resource && (l->value < policy_limits[j].min || l->value > policy_limits[j].max))
			return policy_limits[j].err;
	return NULL;
}

// The highest Landlock ABI stage 1 plans for (maxKnownABI in build.go).
#define PF_MAX_ABI 7

// pf_decode_plan refuses, besides a malformed plan, every value the
// policy's validation and the Go encoder refuse: stage 1 never writes
// one, so a plan that holds one is not what stage 1 meant.
const char *pf_decode_plan(const unsigned char *buf, size_t len, struct plan *p)
{
	struct reader rd = {buf, buf + len, NULL, p}, *r = &rd;
	memset(p, 0, sizeof *p);
	get_magic(r, "PFPLAN01");
	p->argv = get_strs(r, NULL);
	p->path = get_str(r);
	p->env = get_strs(r, NULL);
	p->dir = get_str(r);
	p->njoin = get_u32(r);
	if (p->njoin > 16 && !r->err)
		r->err = "more than 16 cgroup files";
	p->hide = get_strs(r, &p->nhide);
	p->tmp_size = get_u64(r);
	check(r, p->tmp_size >= 1 << 20 && p->tmp_size < 1ULL << 53, "the private /tmp's size is not 1MiB to 2^53-1 bytes (limits.tmp_size)");
	p->home = get_str(r);
	p->ntrees = get_count(r, 4 + 3 + 4);
	p->trees = alloc(r, p->ntrees, sizeof *p->trees);
	for (uint32_t i = 0; p->trees && i < p->ntrees && !r->err; i++) {
		struct tree *t = &p->trees[i];
		t->path = get_str(r);
		t->write = get_flag(r);
		t->exec = get_flag(r);
		t->idmap = get_flag(r);
		t->owner = get_u32(r);
		check(r, t->owner != UINT32_MAX, "a tree's owner is uid -1");
		t->fd = t->origin = -1;
	}
	p->nmasks = get_count(r, 4 + 1);
	p->masks = alloc(r, p->nmasks, sizeof *p->masks);
	for (uint32_t i = 0; p->masks && i < p->nmasks && !r->err; i++) {
		p->masks[i].path = get_str(r);
		p->masks[i].dir = get_flag(r);
		check(r, !p->masks[i].path || p->masks[i].path[0] == '/', "a covered path that is not absolute");
	}
	p->memfd = get_flag(r);
	p->new_net = get_flag(r);
	p->proxy_port = get_u32(r);
	if ((p->proxy_port > 65535 || (p->proxy_port && !p->new_net)) && !r->err)
		r->err = "a proxy port that is not a port, or without a network namespace of its own";
	p->nrlimits = get_count(r, 4 + 4 + 8 + 1);
	check(r, p->nrlimits <= RLIM_NLIMITS, "more resource limits than there are resources");
	p->rlimits = alloc(r, p->nrlimits, sizeof *p->rlimits);
	for (uint32_t i = 0; p->rlimits && i < p->nrlimits && !r->err; i++) {
		struct rlim *l = &p->rlimits[i];
		l->resource = get_u32(r);
		l->name = get_str(r);
		l->value = get_u64(r);
		l->at_most = get_flag(r);
		const char *err = rlimit_error(p, i);
		check(r, !err, err);
	}
	p->setuid = get_flag(r);
	p->uid = get_u32(r);
	p->gid = get_u32(r);
	p->owner = get_u32(r);
	p->owner_gid = get_u32(r);
	p->abi = get_u32(r);
	check(r, p->abi >= 1 && p->abi <= PF_MAX_ABI, "a Landlock ABI that is not 1 to 7");
	p->handled_fs = get_u64(r);
	p->handled_net = get_u64(r);
	p->scoped = get_u64(r);
	p->npaths = get_count(r, 4 + 8);
	p->paths = alloc(r, p->npaths, sizeof *p->paths);
	for (uint32_t i = 0; p->paths && i < p->npaths && !r->err; i++) {
		p->paths[i].path = get_str(r);
		p->paths[i].access = get_u64(r);
	}
	p->nports = get_count(r, 16);
	p->ports = alloc(r, p->nports, sizeof *p->ports);
	for (uint32_t i = 0; p->ports && i < p->nports && !r->err; i++) {
		p->ports[i].port = get_u64(r);
		p->ports[i].access = get_u64(r);
		check(r, p->ports[i].port >= 1 && p->ports[i].port <= 65535, "a TCP port rule for a port that is not 1 to 65535");
	}
	uint32_t n = get_u32(r);
	if (!r->err && (n % sizeof(struct sock_filter) != 0 || n == 0 ||
			n / sizeof(struct sock_filter) > BPF_MAXINSNS))
		r->err = "seccomp program is not 1 to 4096 whole instructions";
	if (need(r, n)) {
		p->nfilter = n / sizeof(struct sock_filter);
		p->filter = alloc(r, p->nfilter, sizeof *p->filter);
		if (p->filter)
			memcpy(p->filter, r->p, n);
		r->p += n;
	}
	get_magic(r, "PFEND");
	if (!r->err && r->p != r->end)
		r->err = "bytes after the end of the plan";
	if (!r->err && (!p->argv[0] || !p->path[0] || !p->dir[0]))
		r->err = "incomplete plan (no command or directory)";
	// set*id(2) reads -1 as "unchanged", and a change to 0 is no change.
	if (!r->err && (p->uid == UINT32_MAX || p->gid == UINT32_MAX || (p->setuid && (p->uid == 0 || p->gid == 0))))
		r->err = "the agent's uid or gid is 0 or -1";
	check(r, p->owner != UINT32_MAX && p->owner_gid != UINT32_MAX, "the trees' owner uid or gid is -1");
	return r->err;
}

static void read_plan(struct plan *p)
{
	unsigned char *buf = malloc(max_plan + 1);
	size_t len = 0;
	if (!buf)
		fail("plan", "out of memory");
	for (;;) {
		ssize_t n = read(PF_FD_PLAN, buf + len, max_plan + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail("plan", "read: %s", E);
		if (n == 0)
			break;
		len += n;
		if (len > max_plan)
			fail("plan", "larger than %d bytes", max_plan);
	}
	close(PF_FD_PLAN);
	const char *err = pf_decode_plan(buf, len, p);
	if (err)
		fail("plan", "%s", err);
	free(buf);
}

// ---- mounts ----

// pf_open_nofollow opens path as O_PATH, refusing symlinks (and magic
// links) in every component: a link planted since stage 1 checked the
// policy (SR-02, SR-23) is refused here rather than followed. It returns
// the descriptor, or -errno.
int pf_open_nofollow(const char *path)
{
	struct pf_open_how how = {O_PATH | O_CLOEXEC, 0, PF_RESOLVE_NO_SYMLINKS | PF_RESOLVE_NO_MAGICLINKS};
	int fd = (int)syscall(pf_sys_openat2, AT_FDCWD, path, &how, sizeof how);
	return fd < 0 ? -errno : fd;
}

static int open_rule_path(const char *step, const char *path)
{
	int fd = pf_open_nofollow(path);
	if (fd == -ELOOP)
		fail(step, "\"%s\" passes through a symlink now (it did not when the policy was checked): refusing to follow it (SR-02)", path);
	if (fd < 0)
		fail(step, "open \"%s\": %s", path, strerror(-fd));
	return fd;
}

static void set_attr(int dfd, const char *path, unsigned flags, uint64_t set, int userns, const char *what)
{
	struct pf_mount_attr a = {set, 0, 0, userns < 0 ? 0 : (uint64_t)userns};
	if (syscall(pf_sys_mount_setattr, dfd, path, flags, &a, sizeof a) != 0)
		fail("mounts", "%s: mount_setattr: %s", what, E);
}

// detach opens the tree refusing symlinks, checks it still has the owner
// stage 1 saw, and clones it with its flags: write trees noexec, nosuid,
// nodev and, as root, idmapped onto the throwaway uid; read and exec trees
// read-only.
static void detach(struct plan *p, struct tree *t, int userns)
{
	struct stat st;
	t->origin = open_rule_path("mounts", t->path);
	if (fstat(t->origin, &st) != 0)
		fail("mounts", "tree %s: %s", t->path, E);
	if (st.st_uid != t->owner || (t->idmap && st.st_uid != p->owner))
		fail("mounts", "tree %s changed owner since the policy was checked (uid %u, was %u): refusing it",
			t->path, (unsigned)st.st_uid, (unsigned)t->owner);
	t->dir = S_ISDIR(st.st_mode);
	t->dev = st.st_dev;
	t->ino = st.st_ino;
	t->fd = (int)syscall(pf_sys_open_tree, t->origin, "", AT_EMPTY_PATH | PF_OPEN_TREE_CLONE | O_CLOEXEC | PF_AT_RECURSIVE);
	if (t->fd < 0)
		fail("mounts", "tree %s: open_tree: %s", t->path, E);
	uint64_t set = PF_MOUNT_ATTR_NOSUID | PF_MOUNT_ATTR_NODEV;
	if (!t->write)
		set |= PF_MOUNT_ATTR_RDONLY;
	if (!t->exec)
		set |= PF_MOUNT_ATTR_NOEXEC;
	if (t->idmap)
		set |= PF_MOUNT_ATTR_IDMAP;
	struct pf_mount_attr a = {set, 0, 0, t->idmap ? (uint64_t)userns : 0};
	if (syscall(pf_sys_mount_setattr, t->fd, "", AT_EMPTY_PATH | PF_AT_RECURSIVE, &a, sizeof a) != 0)
		fail("mounts", "tree %s: mount_setattr: %s%s", t->path, E,
			t->idmap ? " (the file system may not support idmapped mounts; launch as the owner instead of root)" : "");
}

// beneath reports whether path lies strictly beneath dir.
static int beneath(const char *dir, const char *path)
{
	size_t n = strlen(dir);
	return strncmp(dir, path, n) == 0 && path[n] == '/';
}

// may_make reports whether stage 2 may make the directory (or file) at
// prefix while mounting tree n: only beneath the tmpfs cover that stage 2
// mounted itself, and outside every tree attached before n, whose files
// are the host's.
static int may_make(const struct plan *p, uint32_t n, const char *cover, const char *prefix)
{
	if (!cover || !beneath(cover, prefix))
		return 0;
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(p->trees[i].path, prefix) == 0 || beneath(p->trees[i].path, prefix))
			return 0;
	return 1;
}

// pf_mount_point opens where tree n is mounted again, one component at a
// time from /, refusing a symlink in any of them: the walk may pass through
// a write tree attached before it, which others can change under it.
// Missing components are made where may_make allows; *made says whether
// the last one was (else it is the host's, and must be what was cloned).
// It returns the descriptor, or -errno with the path where it stopped in
// *where (which the caller frees).
int pf_mount_point(struct plan *p, uint32_t n, const char *cover, char **where, int *made)
{
	*made = 0;
	struct tree *t = &p->trees[n];
	size_t len = strlen(t->path);
	char *prefix = strdup(t->path);
	*where = prefix;
	if (!prefix)
		return -ENOMEM;
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (size_t start = 1; start < len;) {
		size_t end = start;
		while (end < len && t->path[end] != '/')
			end++;
		prefix[end] = 0; // prefix is now the path up to this component
		const char *name = prefix + start;
		int err = 0;
		if (may_make(p, n, cover, prefix)) {
			if (end == len && !t->dir) {
				struct pf_open_how how = {O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600, PF_RESOLVE_NO_SYMLINKS | PF_RESOLVE_NO_MAGICLINKS};
				int f = (int)syscall(pf_sys_openat2, fd, name, &how, sizeof how);
				if (f >= 0) {
					close(f);
					*made = 1;
				} else if (errno != EEXIST) {
					err = -errno;
				}
			} else if (mkdirat(fd, name, 0755) == 0) {
				*made = end == len;
			} else if (errno != EEXIST) {
				err = -errno;
			}
		}
		struct pf_open_how how = {O_PATH | O_CLOEXEC, 0, PF_RESOLVE_NO_SYMLINKS | PF_RESOLVE_NO_MAGICLINKS};
		int next = err ? err : (int)syscall(pf_sys_openat2, fd, name, &how, sizeof how);
		if (next < 0 && !err)
			err = -errno;
		close(fd);
		if (err)
			return err;
		fd = next;
		if (end < len)
			prefix[end] = '/'; // the next component joins on; the last keeps its terminator
		start = end + 1;
	}
	return fd;
}

// attach mounts the clone again. A tree no tmpfs covers goes back where it
// was; one a private tmpfs or a hidden directory covers goes onto a mount
// point made in that tmpfs (or, inside an earlier tree, onto the host's
// own). Any mount point stage 2 did not make must be the very directory
// (or file) that was cloned. Trees are attached outermost first, so a tree inside an
// earlier one lands on top of it, not beneath it.
static void attach(struct plan *p, uint32_t n)
{
	struct tree *t = &p->trees[n];
	const char *cover = NULL;
	if (beneath("/tmp", t->path))
		cover = "/tmp";
	else if (beneath("/dev/shm", t->path))
		cover = "/dev/shm";
	for (uint32_t i = 0; !cover && i < p->nhide; i++)
		if (beneath(p->hide[i], t->path))
			cover = p->hide[i];
	char *where;
	int made;
	int mp = pf_mount_point(p, n, cover, &where, &made);
	if (mp == -ELOOP)
		fail("mounts", "\"%s\" passes through a symlink now (it did not when the policy was checked): refusing to follow it (SR-02)", where);
	if (mp < 0)
		fail("mounts", "tree %s: mount point %s: %s", t->path, where ? where : "", strerror(-mp));
	free(where);
	// A mount point stage 2 did not make is the host's: it must be the very
	// directory (or file) that was cloned.
	struct stat st;
	if (!made && (fstat(mp, &st) != 0 || st.st_dev != t->dev || st.st_ino != t->ino))
		fail("mounts", "tree %s is no longer what was cloned: refusing it", t->path);
	if (syscall(pf_sys_move_mount, t->fd, "", mp, "", PF_MOVE_MOUNT_F_EMPTY_PATH | PF_MOVE_MOUNT_T_EMPTY_PATH) != 0)
		fail("mounts", "tree %s: move_mount: %s", t->path, E);
	close(mp);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[64];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		fail("mounts", "idmap user namespace: %s: %s", name, E);
	close(fd);
}

// ns_pid returns the innermost pid (the last of NSpid) of the process
// whose /proc directory is dir, or -1.
static pid_t ns_pid(const char *dir)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "%s/status", dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *line = strstr(buf, "\nNSpid:");
	if (!line)
		return -1;
	char *end = strchr(line + 1, '\n');
	if (end)
		*end = 0;
	char *last = strrchr(line, '\t');
	return last ? (pid_t)strtol(last + 1, NULL, 10) : -1;
}

// The idmap user namespace's child: it tells its pid as the host's /proc
// knows it, and lives until stage 2 closes the hold pipe. It shares stage
// 2's memory (CLONE_VM) on a stack of its own and makes only system calls.
static int idmap_tell[2], idmap_hold[2];
static char idmap_stack[16384] __attribute__((aligned(16)));

static int idmap_child(void *unused)
{
	(void)unused;
	char self[32];
	char b;
	close(idmap_tell[0]);
	close(idmap_hold[1]); // or the hold would never end
	ssize_t n = readlink("/proc/self", self, sizeof self);
	if (n > 0 && write(idmap_tell[1], self, n) == n)
		while (read(idmap_hold[0], &b, 1) < 0 && errno == EINTR)
			;
	_exit(0);
}

// idmap_userns returns a user namespace in which the trees' owner is the
// agent's throwaway uid, for the idmapped mounts. Its only process is a
// child (idmap_child) that lives until the maps are written and the
// namespace is opened. The child shares stage 2's memory rather than
// copying it: the copy cost about 1 ms of each launch of /bin/true
// (40.6 ms against 39.7, interleaved, 2026-12-01).
static int idmap_userns(struct plan *p)
{
	int *tell = idmap_tell, *hold = idmap_hold;
	if (pipe2(tell, O_CLOEXEC) != 0 || pipe2(hold, O_CLOEXEC) != 0)
		fail("mounts", "idmap user namespace: pipe: %s", E);
	pid_t child = clone(idmap_child, idmap_stack + sizeof idmap_stack, CLONE_VM | CLONE_NEWUSER | SIGCHLD, NULL);
	if (child < 0)
		fail("mounts", "idmap user namespace: clone: %s", E);
	close(tell[1]);
	close(hold[0]);
	char dir[48], pid[16] = {0}, map[48];
	ssize_t n;
	while ((n = read(tell[0], pid, sizeof pid - 1)) < 0 && errno == EINTR)
		;
	close(tell[0]);
	if (n <= 0 || strspn(pid, "0123456789") != (size_t)n)
		fail("mounts", "idmap user namespace: the child did not say its pid");
	snprintf(dir, sizeof dir, "/proc/%s", pid);
	if (ns_pid(dir) != child)
		fail("mounts", "idmap user namespace: %s is not the child that was cloned", dir);
	snprintf(map, sizeof map, "%u %u 1\n", p->owner, p->uid);
	write_file(dir, "uid_map", map);
	write_file(dir, "setgroups", "deny");
	snprintf(map, sizeof map, "%u %u 1\n", p->owner_gid, p->gid);
	write_file(dir, "gid_map", map);
	char ns[64];
	snprintf(ns, sizeof ns, "%s/ns/user", dir);
	int fd = open(ns, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fail("mounts", "idmap user namespace: open: %s", E);
	close(hold[1]);
	while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
		;
	return fd;
}

static void mount_tmpfs(const char *dir, const char *opts, const char *what)
{
	if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) != 0)
		fail("mounts", "%s %s: %s", what, dir, E);
}

// The fresh /proc's files that list what the agent's uid may see of the
// kernel's key store: the descriptions of the person's keyrings and keys
// (unprivileged, the agent is the person's uid and possesses their session
// keyring), and per-uid key counts. keyctl is refused, so the contents
// stay out of reach either way; the names are not the agent's business
// either. And the kernel's command line: the host's boot configuration,
// which on some hosts carries addresses, tokens or an init's arguments
// (here: the VM agent's listening address and flags; the agent-view red
// team). Each is covered with the (read-only) host's /dev/null, as
// container runtimes mask the key lists.
static const char *const masked_proc[] = {"/proc/keys", "/proc/key-users", "/proc/cmdline"};

static void mask_proc(void)
{
	for (size_t i = 0; i < sizeof masked_proc / sizeof *masked_proc; i++) {
		const char *path = masked_proc[i];
		if (access(path, F_OK) != 0 && errno == ENOENT)
			continue; // a kernel without CONFIG_KEYS
		if (mount("/dev/null", path, NULL, MS_BIND, NULL) != 0)
			fail("mounts", "cover %s: %s", path, E);
		set_attr(AT_FDCWD, path, 0, PF_MOUNT_ATTR_RDONLY | PF_MOUNT_ATTR_NOSUID | PF_MOUNT_ATTR_NOEXEC, -1, "cover /proc's key lists and command line");
	}
}

// empty_tmpfs returns a detached, empty, read-only tmpfs mount.
static int empty_tmpfs(const char *what)
{
	int fs = (int)syscall(pf_sys_fsopen, "tmpfs", PF_FSOPEN_CLOEXEC);
	if (fs < 0)
		fail("mounts", "cover %s: fsopen: %s", what, E);
	if (syscall(pf_sys_fsconfig, fs, PF_FSCONFIG_SET_STRING, "size", "4k", 0) != 0 ||
			syscall(pf_sys_fsconfig, fs, PF_FSCONFIG_SET_STRING, "mode", "0555", 0) != 0 ||
			syscall(pf_sys_fsconfig, fs, PF_FSCONFIG_CMD_CREATE, NULL, NULL, 0) != 0)
		fail("mounts", "cover %s: fsconfig: %s", what, E);
	int m = (int)syscall(pf_sys_fsmount, fs, PF_FSMOUNT_CLOEXEC,
		PF_MOUNT_ATTR_RDONLY | PF_MOUNT_ATTR_NOSUID | PF_MOUNT_ATTR_NODEV | PF_MOUNT_ATTR_NOEXEC);
	if (m < 0)
		fail("mounts", "cover %s: fsmount: %s", what, E);
	close(fs);
	return m;
}

// cover_own covers the launcher's own files and directories the agent
// could otherwise read (the plan's masks, after the trees, since a tree
// may bring one back): a file with the host's /dev/null, mounted
// read-only and nodev, so that opening it fails whatever names it (a
// glob, a script, $(ls)); a directory with an empty read-only tmpfs. The
// mount point is opened refusing symlinks, and must still be a directory
// or not, as stage 1 saw it. Missing is an error too: stage 1 saw it
// there a moment ago, and the agent must not start beside a file that
// may come back uncovered.
static void cover_own(struct plan *p)
{
	for (uint32_t i = 0; i < p->nmasks; i++) {
		const struct mask *m = &p->masks[i];
		int mp = pf_open_nofollow(m->path);
		if (mp == -ELOOP)
			fail("mounts", "the launcher's own \"%s\" passes through a symlink now (it did not when the plan was made): refusing to follow it", m->path);
		if (mp < 0)
			fail("mounts", "cover the launcher's own %s: %s (it was there when the plan was made)", m->path, strerror(-mp));
		struct stat st;
		if (fstat(mp, &st) != 0)
			fail("mounts", "cover the launcher's own %s: %s", m->path, E);
		if ((S_ISDIR(st.st_mode) ? 1 : 0) != m->dir)
			fail("mounts", "the launcher's own %s is no longer a %s: refusing to start beside it uncovered", m->path, m->dir ? "directory" : "file");
		int src;
		if (m->dir) {
			src = empty_tmpfs(m->path);
		} else {
			src = (int)syscall(pf_sys_open_tree, AT_FDCWD, "/dev/null", PF_OPEN_TREE_CLONE | O_CLOEXEC);
			if (src < 0)
				fail("mounts", "cover %s: open_tree /dev/null: %s", m->path, E);
			set_attr(src, "", AT_EMPTY_PATH, PF_MOUNT_ATTR_RDONLY | PF_MOUNT_ATTR_NOSUID | PF_MOUNT_ATTR_NODEV | PF_MOUNT_ATTR_NOEXEC, -1, "cover the launcher's own files");
		}
		if (syscall(pf_sys_move_mount, src, "", mp, "", PF_MOVE_MOUNT_F_EMPTY_PATH | PF_MOVE_MOUNT_T_EMPTY_PATH) != 0)
			fail("mounts", "cover the launcher's own %s: move_mount: %s", m->path, E);
		close(src);
		close(mp);
	}
}

// A terminal on descriptors 0-2 whose node lies directly in a hidden
// directory (the agent's own pty, the relay's slave, in /dev/pts): held
// as a clone of its node while the directory is covered, then mounted
// again at its name in the cover. The agent keeps its descriptors either
// way, but ttyname (tty, ssh, gpg's GPG_TTY) finds a terminal's name by
// looking its path up, and reopen_terminals opens it through that path.
struct graft {
	char path[64];
	int clone;
};

static int hold_terminals(struct plan *p, struct graft held[3])
{
	int n = 0;
	for (int fd = 0; fd <= 2; fd++) {
		struct stat st, at;
		char link[32], path[64];
		if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode) || !isatty(fd))
			continue;
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t len = readlink(link, path, sizeof path - 1);
		if (len <= 0 || len == (ssize_t)sizeof path - 1)
			continue;
		path[len] = 0;
		const char *slash = strrchr(path, '/');
		int hidden = 0;
		for (uint32_t i = 0; slash && i < p->nhide; i++)
			hidden |= strlen(p->hide[i]) == (size_t)(slash - path) && beneath(p->hide[i], path);
		int dup = 0;
		for (int i = 0; i < n; i++)
			dup |= strcmp(held[i].path, path) == 0;
		if (!hidden || dup)
			continue;
		// The very node the descriptor is, not whatever has its name now.
		int node = pf_open_nofollow(path);
		if (node < 0)
			continue; // not shown in the sandbox: nothing to graft
		if (fstat(node, &at) != 0 || at.st_dev != st.st_dev || at.st_ino != st.st_ino) {
			close(node);
			continue;
		}
		int clone = (int)syscall(pf_sys_open_tree, node, "", AT_EMPTY_PATH | PF_OPEN_TREE_CLONE | O_CLOEXEC);
		close(node);
		if (clone < 0)
			fail("mounts", "keep the agent's terminal %s: open_tree: %s", path, E);
		set_attr(clone, "", AT_EMPTY_PATH, PF_MOUNT_ATTR_RDONLY | PF_MOUNT_ATTR_NOSUID | PF_MOUNT_ATTR_NOEXEC, -1, "keep the agent's terminal");
		memcpy(held[n].path, path, (size_t)len + 1);
		held[n++].clone = clone;
	}
	return n;
}

static void graft_terminals(struct graft held[3], int n)
{
	for (int i = 0; i < n; i++) {
		int f = open(held[i].path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (f < 0)
			fail("mounts", "keep the agent's terminal %s: mount point: %s", held[i].path, E);
		close(f);
		if (syscall(pf_sys_move_mount, held[i].clone, "", AT_FDCWD, held[i].path, PF_MOVE_MOUNT_F_EMPTY_PATH) != 0)
			fail("mounts", "keep the agent's terminal %s: move_mount: %s", held[i].path, E);
		close(held[i].clone);
	}
}

// setup_mounts shapes the mount namespace stage 2 was cloned into:
//
//  1. private propagation, so nothing mounted here reaches the host;
//  2. the plan's trees are opened without following symlinks and cloned,
//     each with its own flags;
//  3. every host mount becomes read-only and set-uid-free: chmod, utimes or
//     a new file anywhere the policy does not grant writing fail with
//     EROFS, whatever the agent's uid owns (Landlock before ABI 8 does not
//     mediate metadata changes);
//  4. socket directories and /dev/pts are covered (SR-08; the agent's own
//     terminal is grafted back), /tmp and /dev/shm replaced
//     by private tmpfs, /proc replaced by this pid namespace's, with its
//     key lists covered;
//  5. the trees are mounted again, in place or on fresh mount points in
//     the covering tmpfs, which then become read-only too;
//  6. the launcher's own files the agent could reach are covered.
static void setup_mounts(struct plan *p)
{
	if (mount("", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		fail("mounts", "make / private: %s", E);
	int userns = -1;
	for (uint32_t i = 0; i < p->ntrees; i++)
		if (p->trees[i].idmap && userns < 0)
			userns = idmap_userns(p);
	for (uint32_t i = 0; i < p->ntrees; i++)
		detach(p, &p->trees[i], userns);
	if (userns >= 0)
		close(userns);
	set_attr(AT_FDCWD, "/", PF_AT_RECURSIVE, PF_MOUNT_ATTR_RDONLY | PF_MOUNT_ATTR_NOSUID, -1, "make the host's mounts read-only");
	struct graft held[3];
	int nheld = hold_terminals(p, held);
	for (uint32_t i = 0; i < p->nhide; i++)
		mount_tmpfs(p->hide[i], "size=64k,mode=0755", "hide");
	graft_terminals(held, nheld);
	char opts[64];
	snprintf(opts, sizeof opts, "size=%llu,mode=1777", (unsigned long long)p->tmp_size);
	mount_tmpfs("/tmp", opts, "private");
	struct stat st;
	if (lstat("/dev/shm", &st) == 0 || errno != ENOENT)
		mount_tmpfs("/dev/shm", opts, "private");
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
		fail("mounts", "fresh /proc: %s", E);
	mask_proc();
	// Fileless execution: memfds in this pid namespace can never be made
	// executable (Linux 6.3+; seccomp refuses MFD_EXEC as well). Only root
	// may set it; elsewhere seccomp refuses every memfd not sealed
	// non-executable.
	if (p->memfd) {
		int fd = open("/proc/sys/vm/memfd_noexec", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "2", 1) != 1)
			fail("mounts", "vm.memfd_noexec: %s", E);
		close(fd);
	}
	for (uint32_t i = 0; i < p->ntrees; i++) {
		attach(p, i);
		close(p->trees[i].fd);
		close(p->trees[i].origin);
	}
	cover_own(p);
	for (uint32_t i = 0; i < p->nhide; i++)
		set_attr(AT_FDCWD, p->hide[i], 0, PF_MOUNT_ATTR_RDONLY, -1, "hide: read-only");
	if (p->home[0]) {
		if (mkdir(p->home, 0700) != 0)
			fail("mounts", "private home: %s", E);
		if (p->setuid && chown(p->home, p->uid, p->gid) != 0)
			fail("mounts", "private home: %s", E);
	}
}

// reopen_terminals gives each of descriptors 0-2 that is a terminal the
// same terminal opened again through the sandbox's /dev, which is
// read-only. The descriptor stage 2 inherited is on the host's writable
// mount, and fchmod, fchown, futimens and fsetxattr act on a descriptor
// (Landlock checks none of them): unprivileged, the agent is the
// person's uid and could make the person's terminal readable by every
// user. As root it is not needed: the agent's throwaway uid owns no
// terminal. What is opened must be the very file (device and inode of
// the devpts or devtmpfs node, not only the terminal's number, which two
// devpts instances share); a pty master (TIOCGPTN answers) is left alone,
// since opening its path (/dev/ptmx) makes a new pty. A terminal that
// cannot be opened again as itself is kept only when this uid does not
// own it (a terminal of the user the person switched from), so no one in
// the sandbox can change it; otherwise the launch fails.
static void reopen_terminals(struct plan *p)
{
	if (p->setuid)
		return;
	for (int fd = 0; fd <= 2; fd++) {
		struct stat st, again;
		struct statvfs vfs;
		unsigned int ptn;
		if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode) || !isatty(fd) || ioctl(fd, TIOCGPTN, &ptn) == 0)
			continue;
		char link[32], path[256] = "?";
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, path, sizeof path - 1);
		int flags = fcntl(fd, F_GETFL);
		int nfd = -1;
		if (n > 0 && flags >= 0) {
			path[n] = 0;
			nfd = open(path, (flags & (O_ACCMODE | O_NONBLOCK)) | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
		}
		int same = nfd >= 0 && fstat(nfd, &again) == 0 && again.st_rdev == st.st_rdev && again.st_dev == st.st_dev &&
			   again.st_ino == st.st_ino && fstatvfs(nfd, &vfs) == 0 && (vfs.f_flag & ST_RDONLY);
		if (!same) {
			if (nfd >= 0)
				close(nfd);
			if (st.st_uid != geteuid())
				continue;
			fail("terminal", "descriptor %d (%s): the sandbox's read-only /dev does not show this terminal, which the agent could then chmod; run the launcher from a terminal its /dev/pts holds", fd, path);
		}
		if (dup3(nfd, fd, 0) != fd)
			fail("terminal", "descriptor %d: %s", fd, E);
		close(nfd);
	}
}

// drop_controlling_terminal gives up the controlling terminal stage 2 has
// from the launcher's session when it leads no session of its own (no
// standard stream is a terminal, so stage 1 made no relay), and the agent
// has none either. Otherwise /dev/tty opened the person's own terminal:
// a policy listing /dev/tty (for a prompt, as on the agent's own
// terminal) let the agent write to the person's screen and read what was
// typed to the shell (a re-test). The process group stays the
// launcher's, so the terminal's Ctrl-C and Ctrl-Z reach the agent as
// before; TIOCNOTTY from a process that does not lead its session sends
// no signal.
static void drop_controlling_terminal(void)
{
	if (getsid(0) == getpid())
		return; // the agent's own terminal (stage 1's relay)
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENXIO || errno == EIO || errno == ENOENT)
			return; // none, or hung up, or no /dev/tty at all
		fail("terminal", "open /dev/tty to give up the launcher's controlling terminal: %s", E);
	}
	if (ioctl(fd, TIOCNOTTY) != 0)
		fail("terminal", "give up the launcher's controlling terminal: %s", E);
	close(fd);
}

// loopback_up brings up lo in the new network namespace, so the agent can
// talk to itself and to nothing else.
static void loopback_up(void)
{
	struct ifreq ifr = {0};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		fail("network", "socket: %s", E);
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) != 0)
		fail("network", "get lo flags: %s", E);
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) != 0)
		fail("network", "bring lo up: %s", E);
	close(fd);
}

// proxy_listener makes the proxy's listener, 127.0.0.1:proxy_port in
// the agent's network namespace, and hands it to stage 1 over the socket
// that follows the cgroup files: stage 1 gives it to the net process,
// which accepts on it from outside the sandbox. Stage 2 keeps no copy.
static void proxy_listener(struct plan *p)
{
	int pass = PF_FD_JOIN + (int)p->njoin;
	struct stat st;
	if (fstat(pass, &st) != 0 || !S_ISSOCK(st.st_mode))
		fail("network", "no socket to hand the proxy's listener over on descriptor %d", pass);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0)
		fail("network", "proxy listener: socket: %s", E);
	int one = 1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)p->proxy_port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
			bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 512) != 0)
		fail("network", "proxy listener on 127.0.0.1:%u: %s", p->proxy_port, E);
	char byte = 'L';
	struct iovec iov = {&byte, 1};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	memset(&u, 0, sizeof u);
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof fd);
	ssize_t n;
	while ((n = sendmsg(pass, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	if (n != 1)
		fail("network", "hand the proxy's listener over: %s", n < 0 ? E : "short send");
	close(fd);
	close(pass);
}

// set_rlimit applies one limit. AtMost lowers only: it never raises what
// the launcher inherited.
static int set_rlimit(const struct rlim *l)
{
	struct rlimit v = {l->value, l->value}, cur;
	if (l->at_most && getrlimit(l->resource, &cur) == 0 && cur.rlim_max < l->value)
		v.rlim_cur = v.rlim_max = cur.rlim_max;
	return setrlimit(l->resource, &v);
}

// on_stage2 says whether limit l is set on stage 2 itself, before the
// filter, rather than in the agent's process: RLIMIT_CORE, because the
// filter answers the agent's changes of it without making them (a limit
// of 0 lets the host's core_pattern pipe run, 1 does not), and would
// answer stage 2's own call in the agent's process the same way. Stage 2
// is made not dumpable (drop_privileges), and a limit of 1 makes no dump
// before that either; the agent inherits it.
static int on_stage2(const struct rlim *l)
{
	return l->resource == RLIMIT_CORE;
}

// set_stage2_rlimits sets the limits on_stage2 names.
static void set_stage2_rlimits(struct plan *p)
{
	for (uint32_t i = 0; i < p->nrlimits; i++)
		if (on_stage2(&p->rlimits[i]) && set_rlimit(&p->rlimits[i]) != 0)
			fail("rlimits", "set %s to %llu: %s", p->rlimits[i].name, (unsigned long long)p->rlimits[i].value, E);
}

static int last_cap(void)
{
	char buf[16] = {0};
	int fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, buf, sizeof buf - 1) <= 0)
		fail("identity", "read cap_last_cap: %s", E);
	close(fd);
	char *end;
	long n = strtol(buf, &end, 10);
	if (end == buf || (*end != '\n' && *end != 0) || n < 0 || n > 63)
		fail("identity", "cap_last_cap %s is not a capability number", buf);
	return (int)n;
}

// drop_privileges changes to the plan's identity, clears every capability
// set and sets no_new_privs.
static void drop_privileges(struct plan *p)
{
	if (p->setuid) {
		if (setgroups(0, NULL) != 0)
			fail("identity", "setgroups: %s", E);
		if (setresgid(p->gid, p->gid, p->gid) != 0)
			fail("identity", "setgid %u: %s", p->gid, E);
	}
	// The bounding set needs CAP_SETPCAP to shrink, so it goes before the
	// uid change.
	int last = last_cap();
	for (int c = 0; c <= last; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0 && errno != EINVAL)
			fail("identity", "drop capability %d from the bounding set: %s", c, E);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0)
		fail("identity", "clear ambient capabilities: %s", E);
	if (p->setuid) {
		if (setresuid(p->uid, p->uid, p->uid) != 0)
			fail("identity", "setuid %u: %s", p->uid, E);
		// The credential change cleared the parent-death signal.
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
			fail("identity", "re-arm the parent-death signal: %s", E);
	}
	if (p->setuid) {
		uid_t ru, eu, su;
		gid_t rg, eg, sg;
		if (getresuid(&ru, &eu, &su) != 0 || getresgid(&rg, &eg, &sg) != 0 || getgroups(0, NULL) != 0 ||
				ru != p->uid || eu != p->uid || su != p->uid || rg != p->gid || eg != p->gid || sg != p->gid)
			fail("identity", "the uid and gid are not %u and %u alone after the change", p->uid, p->gid);
	}
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2] = {{0}};
	if (syscall(SYS_capset, &hdr, data) != 0)
		fail("identity", "clear capabilities: %s", E);
	// Stage 2 runs as the agent's uid: without this the agent could read
	// its memory or reopen its descriptors through /proc/1. (The agent's
	// own execve makes the agent dumpable again, which is its business.)
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		fail("identity", "not dumpable: %s", E);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		fail("identity", "no_new_privs: %s", E);
}

static void apply_landlock(struct plan *p)
{
	struct pf_ruleset_attr attr = {p->handled_fs, p->handled_net, p->scoped};
	int rs = (int)syscall(pf_sys_landlock_create_ruleset, &attr, sizeof attr, 0);
	if (rs < 0)
		fail("landlock", "create ruleset (ABI %u): %s", p->abi, E);
	for (uint32_t i = 0; i < p->npaths; i++) {
		struct pf_path_beneath r = {p->paths[i].access, open_rule_path("landlock", p->paths[i].path)};
		if (syscall(pf_sys_landlock_add_rule, rs, PF_LANDLOCK_RULE_PATH_BENEATH, &r, 0) != 0)
			fail("landlock", "add rule for \"%s\": %s", p->paths[i].path, E);
		close(r.parent_fd);
	}
	for (uint32_t i = 0; i < p->nports; i++) {
		struct pf_net_port r = {p->ports[i].access, p->ports[i].port};
		if (syscall(pf_sys_landlock_add_rule, rs, PF_LANDLOCK_RULE_NET_PORT, &r, 0) != 0)
			fail("landlock", "add rule for TCP port %llu: %s", (unsigned long long)r.port, E);
	}
	if (syscall(pf_sys_landlock_restrict_self, rs, 0) != 0)
		fail("landlock", "restrict self: %s", E);
	close(rs);
}

static void load_seccomp(struct plan *p)
{
	struct sock_fprog prog = {(unsigned short)p->nfilter, p->filter};
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
		fail("seccomp", "load filter of %u instructions: %s", p->nfilter, E);
}

// threads returns how many threads this process has, or -1.
static int threads(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *line = strstr(buf, "\nThreads:");
	return line ? (int)strtol(line + 9, NULL, 10) : -1;
}

// join_cgroups moves stage 2 into its v1 cgroups by writing "0" (this
// thread) to the tasks files stage 1 opened: for a process of one thread
// that is the whole process, and it avoids the global lock (and RCU grace
// period) that moving a process by pid takes. On cgroup v2 stage 2 was
// cloned into its group.
static void join_cgroups(struct plan *p)
{
	if (p->njoin > 0 && threads() != 1)
		fail("cgroup", "stage 2 is not a single thread, so writing 0 to tasks would move one thread, not the process");
	for (uint32_t i = 0; i < p->njoin; i++) {
		int fd = PF_FD_JOIN + (int)i;
		if (write(fd, "0", 1) != 1)
			fail("cgroup", "join v1 group %u: %s", i + 1, E);
		close(fd);
	}
}

// confine applies the Boundaries in the order of DESIGN.md §3. The
// namespaces (step 1) were made by clone(2) in stage 1.
static void confine(struct plan *p)
{
	join_cgroups(p); // before anything else: nothing starts outside the group
	drop_controlling_terminal();
	setup_mounts(p);
	reopen_terminals(p);
	if (p->new_net)
		loopback_up();
	if (p->proxy_port)
		proxy_listener(p);
	// 4. Resource limits are set in the agent's process, just before
	//    execve (start): on stage 2 itself, RLIMIT_CPU would let the agent
	//    wear its init down (each signal it sends wakes it). RLIMIT_CORE
	//    alone is set here (on_stage2).
	set_stage2_rlimits(p);
	drop_privileges(p);
	apply_landlock(p);
	// Every descriptor above 2 is marked close-on-exec, so the agent
	// inherits none of them (SR-10).
	if (syscall(pf_sys_close_range, 3u, ~0u, PF_CLOSE_RANGE_CLOEXEC) != 0)
		fail("close fds", "%s", E);
	load_seccomp(p); // last
}

// ---- the agent and init ----

// What the agent's process could not do before execve.
struct child_error {
	int step; // 1 rlimit, 2 chdir, 3 execve, 4 terminal
	uint32_t index;
	int err;
};

// The agent's process before execve: its signal mask, resource limits
// and working directory, then execve; what failed goes back on ep.
struct start_args {
	struct plan *p;
	const sigset_t *orig;
	int ep;
	int own_group; // stage 2 leads the session of the agent's own terminal
};

static char agent_stack[65536] __attribute__((aligned(16)));

// A stop signal that came to the agent's process before its execve
// (agent_child sets it; the process shares stage 2's memory until then).
static volatile sig_atomic_t stop_before_exec;

static void note_stop(int sig) { stop_before_exec = sig; }

static int agent_child(void *arg)
{
	struct start_args *a = arg;
	struct plan *p = a->p;
	struct child_error ce = {0, 0, 0};
	// Stopped before its execve, the process would hold stage 2, which
	// waits for that execve (CLONE_VFORK), and nothing would report the
	// stop: a Ctrl-Z in that moment hung the terminal (a re-test, 4 in
	// 10). Until execve, which sets caught signals back to their default,
	// a stop signal is noted instead, and stage 2 sends it to the agent
	// once it runs. One the launcher's parent ignored stays ignored.
	struct sigaction note = {0}, was;
	note.sa_handler = note_stop;
	note.sa_flags = SA_RESTART;
	sigemptyset(&note.sa_mask);
	static const int stops[] = {SIGTSTP, SIGTTIN, SIGTTOU};
	for (size_t i = 0; i < sizeof stops / sizeof stops[0]; i++)
		if (sigaction(stops[i], NULL, &was) == 0 && was.sa_handler == SIG_DFL)
			sigaction(stops[i], &note, NULL);
	// On the agent's own terminal (stage 1's relay), the agent is a
	// process group of its own: a group whose only parent outside it is
	// in another session is orphaned, and the kernel drops the terminal's
	// Ctrl-Z to an orphaned group, so in stage 2's group (stage 1 is in
	// the person's session) the agent could not be stopped. The group is
	// made the terminal's foreground here, before execve: made so by
	// stage 2 once execve had returned, an agent that read its terminal
	// at once (sh -c 'read x') read it from the background, and the
	// kernel stopped it with SIGTTIN, a stop the person never asked for
	// (CI, 2026-12-02; a re-test, 2 in 40). A Ctrl-Z from now on is the
	// group's, and noted above until execve; SIGTTOU is still blocked
	// (stage 2's mask), which lets a background group take the terminal.
	if (a->own_group && setpgid(0, 0) != 0)
		ce = (struct child_error){4, 0, errno};
	if (a->own_group && !ce.step) {
		pid_t self = getpid();
		int fg = 0, err = ENOTTY;
		for (int fd = 0; fd < 3 && !fg; fd++)
			if (!(fg = ioctl(fd, TIOCSPGRP, &self) == 0))
				err = errno;
		if (!fg)
			ce = (struct child_error){5, 0, err};
	}
	sigprocmask(SIG_SETMASK, a->orig, NULL);
	for (uint32_t i = 0; i < p->nrlimits && !ce.step; i++)
		if (!on_stage2(&p->rlimits[i]) && set_rlimit(&p->rlimits[i]) != 0)
			ce = (struct child_error){1, i, errno};
	if (!ce.step && chdir(p->dir) != 0)
		ce = (struct child_error){2, 0, errno};
	if (!ce.step) {
		execve(p->path, p->argv, p->env);
		ce = (struct child_error){3, 0, errno};
	}
	if (write(a->ep, &ce, sizeof ce) < 0)
		_exit(127);
	_exit(127);
}

// start starts the agent with the signal mask stage 2 started with, its
// resource limits and the policy's environment, and returns its pid once
// execve has succeeded. Stage 2 installs no handlers, so the agent
// inherits ignored signals (a nohup) as any exec would. The process
// shares stage 2's memory until its execve (CLONE_VM | CLONE_VFORK, on a
// stack of its own, as posix_spawn does): a fork's copy of stage 2's
// page tables would cost about a millisecond, for a process that only
// sets three things and runs execve. Stage 2 waits meanwhile.
static pid_t start(struct plan *p, const sigset_t *orig)
{
	int ep[2];
	if (pipe2(ep, O_CLOEXEC) != 0)
		fail("exec", "pipe: %s", E);
	stop_before_exec = 0;
	// Stage 2 leads a session (stage 1 made it so) only on the agent's
	// own terminal; its session id, seen from its pid namespace, is then
	// its own pid, 1.
	struct start_args a = {p, orig, ep[1], getsid(0) == getpid()};
	pid_t pid = clone(agent_child, agent_stack + sizeof agent_stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
	if (pid < 0)
		fail("exec", "clone: %s", E);
	close(ep[1]);
	struct child_error ce;
	ssize_t n;
	while ((n = read(ep[0], &ce, sizeof ce)) < 0 && errno == EINTR)
		;
	close(ep[0]);
	if (n == 0) {
		// execve closed the pipe: the agent runs (a stop that came
		// before, as it would have stopped it).
		if (stop_before_exec)
			kill(pid, stop_before_exec);
		return pid;
	}
	waitpid(pid, NULL, 0);
	if (n != sizeof ce)
		fail("exec", "the agent's process ended before execve");
	switch (ce.step) {
	case 1: {
		struct rlim *l = &p->rlimits[ce.index];
		fail("rlimits", "set %s to %llu: %s", l->name, (unsigned long long)l->value, strerror(ce.err));
	}
	case 2:
		fail("exec", "chdir %s: %s", p->dir, strerror(ce.err));
	case 4:
		fail("exec", "put the agent in a process group of its own: %s", strerror(ce.err));
	case 5:
		fail("exec", "make the agent its terminal's foreground: %s", strerror(ce.err));
	default:
		// The agent itself could not run: stage 1 exits as env(1) and
		// the shells do, so that a script can tell "no such agent"
		// from the launcher's own failures.
		fail_status(ce.err == ENOENT ? PF_EXIT_NOT_FOUND : PF_EXIT_CANNOT_RUN, "exec", "%s: %s", p->path, strerror(ce.err));
	}
}

static int status_code(int st)
{
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}

// gone reports whether a failed open or read of /proc means that the
// process or thread is gone. Every other error (EMFILE, ENFILE, ENOMEM,
// EACCES) leaves the question open, which the checks below read as
// "running": an agent that lowered stage 2's RLIMIT_NOFILE so that
// /proc/N/task would not open had every process read as gone, and so
// stopped, and ran on by itself while the person's shell had the
// terminal (a hunt).
static int gone(int err)
{
	return err == ENOENT || err == ESRCH;
}

// thread_stopped reports whether the thread whose stat file is at path
// is stopped (T, t) or gone (Z, X, or no file).
static int thread_stopped(const char *path)
{
	char buf[512];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return gone(errno);
	ssize_t n = read(fd, buf, sizeof buf - 1);
	int err = errno;
	close(fd);
	if (n == 0)
		return 1; // reaped between the open and the read
	if (n < 0)
		return gone(err);
	buf[n] = '\0';
	char *rp = strrchr(buf, ')');
	if (!rp || rp[1] != ' ')
		return 0;
	char st = rp[2];
	return st == 'T' || st == 't' || st == 'Z' || st == 'X';
}

// each_id calls f(id, arg) for each entry of dir named by a number above
// min, while f returns 1. It returns 0 once f does, 1 when every call
// returned 1, and missing when dir does not exist (or its process is
// gone); 0 when it cannot be opened or read otherwise.
static int each_id(const char *dir, long min, int missing, int (*f)(long id, long arg), long arg)
{
	DIR *d = opendir(dir);
	if (!d)
		return gone(errno) ? missing : 0;
	int ok = 1;
	struct dirent *e;
	for (;;) {
		errno = 0;
		if ((e = readdir(d)) == NULL) {
			if (errno != 0 && !gone(errno))
				ok = 0;
			break;
		}
		char *end;
		long id = strtol(e->d_name, &end, 10);
		if (*end == '\0' && id > min && !(ok = f(id, arg)))
			break;
	}
	closedir(d);
	return ok;
}

static int task_stopped(long tid, long pid)
{
	char path[96];
	snprintf(path, sizeof path, "/proc/%ld/task/%ld/stat", pid, tid);
	return thread_stopped(path);
}

// pf_threads_stopped reports whether every thread of process pid is
// stopped or gone. Each thread is read, not the process: /proc/PID/stat
// is the main thread's, which reads Z once it has called pthread_exit
// while the others run on (a re-test kept a tree running through Ctrl-Z
// so).
int pf_threads_stopped(long pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/task", pid);
	return each_id(path, 0, 1, task_stopped, pid); // no task directory: gone
}

static int process_stopped(long pid, long unused)
{
	(void)unused;
	return pf_threads_stopped(pid);
}

// all_stopped reports whether every process of the pid namespace but
// stage 2 (pid 1) is stopped, or gone, read from the namespace's own
// /proc thread by thread; an unreadable /proc is not all stopped.
static int all_stopped(void)
{
	return each_id("/proc", 1, 0, process_stopped, 0);
}

// The watch over a stopped tree (supervise) compares marks, not states:
// tree_mark mixes, under a key of stage 2's own, every thread of the tree
// with how many times it has been given a CPU (the third field of its
// schedstat). A thread that ran, however briefly, or began or ended, since
// the mark was taken changes it. Looking at the threads' states every
// tick missed a process that a timer continued for a moment at a time,
// and that took the terminal between two looks (a re-test).
static uint64_t mark_key;
static uint64_t mark_acc;
static int mark_ok;

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

// read_whole reads the file at path into buf, NUL-terminated, and
// returns its length; -1 with errno when it cannot be read, EFBIG when it
// does not fit (a status cut short would lose its last lines).
static ssize_t read_whole(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t len = 0;
	ssize_t n;
	do {
		n = read(fd, buf + len, size - 1 - len);
		if (n > 0)
			len += n;
	} while ((n > 0 || (n < 0 && errno == EINTR)) && len < size - 1);
	int err = len == size - 1 ? EFBIG : errno;
	close(fd);
	if (len == size - 1 || n < 0) {
		errno = err;
		return -1;
	}
	buf[len] = '\0';
	return (ssize_t)len;
}

// pf_thread_runs sets *v to what a thread's mark holds: from the
// thread's schedstat file (at schedstat), how many times it was given a
// CPU; where that tells nothing, from its status file, its state and how
// many times it left the CPU. It returns 1; 0 when that cannot be told;
// -1 when the thread is gone.
//
// Schedstat tells nothing when it is missing (CONFIG_SCHED_INFO off) or
// reads 0 (kernels without schedstats or delay accounting print "0 0 0"
// for every thread, which made every mark the same, and the watch blind:
// a review). A thread that can be stopped has run, so a time or count of
// 0 is such a kernel's. The context switch counts are kept on every
// kernel: a thread that ran and left the CPU has switched out, and one
// still on it reads running, not stopped, in State.
int pf_thread_runs(const char *schedstat, const char *status, uint64_t *v)
{
	char buf[8192];
	ssize_t n = read_whole(schedstat, buf, sizeof buf);
	if (n < 0 && errno != ENOENT)
		return gone(errno) ? -1 : 0;
	if (n == 0)
		return -1; // reaped between the open and the read
	if (n > 0) {
		unsigned long long on, waited, runs;
		if (sscanf(buf, "%llu %llu %llu", &on, &waited, &runs) != 3)
			return 0;
		if (on != 0 && runs != 0) {
			*v = runs;
			return 1;
		}
	}
	if ((n = read_whole(status, buf, sizeof buf)) <= 0)
		return n == 0 || gone(errno) ? -1 : 0;
	unsigned long long total = 0, c;
	int found = 0;
	char state = 0;
	for (char *l = buf, *next; l; l = next) {
		if ((next = strchr(l, '\n')) != NULL)
			*next++ = '\0';
		if (strncmp(l, "State:", 6) == 0)
			state = l[6 + strspn(l + 6, " \t")];
		else if (sscanf(l, "voluntary_ctxt_switches: %llu", &c) == 1 || sscanf(l, "nonvoluntary_ctxt_switches: %llu", &c) == 1) {
			total += c;
			found++;
		}
	}
	if (!state || found != 2)
		return 0;
	// The top bit keeps it apart from a schedstat count: a thread whose
	// schedstat reads 0 until it first runs changes its mark when it does.
	*v = 1ULL << 63 | (uint64_t)total << 8 | (unsigned char)state;
	return 1;
}

static int mark_thread(long tid, long pid)
{
	char sched[96], status[96];
	snprintf(sched, sizeof sched, "/proc/%ld/task/%ld/schedstat", pid, tid);
	snprintf(status, sizeof status, "/proc/%ld/task/%ld/status", pid, tid);
	uint64_t v;
	int r = pf_thread_runs(sched, status, &v);
	if (r == 0) {
		mark_ok = 0;
		return 0;
	}
	if (r > 0)
		mark_acc += mix64(mix64(mark_key ^ (uint64_t)tid) ^ v);
	return 1;
}

static int mark_process(long pid, long unused)
{
	(void)unused;
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/task", pid);
	return each_id(path, 0, 1, mark_thread, pid) && mark_ok;
}

// mark sets *m to the mark of process pid's threads (0: every process of
// the pid namespace but stage 2); 0 when it cannot be told.
static int mark(long pid, uint64_t *m)
{
	if (mark_key == 0 && getrandom(&mark_key, sizeof mark_key, 0) != sizeof mark_key)
		return 0;
	mark_acc = 0;
	mark_ok = 1;
	int ok = pid == 0 ? each_id("/proc", 1, 0, mark_process, 0) : mark_process(pid, 0);
	if (!ok || !mark_ok)
		return 0;
	*m = mark_acc;
	return 1;
}

static int tree_mark(uint64_t *m) { return mark(0, m); }

int pf_process_mark(long pid, uint64_t *m) { return mark(pid, m); }

#define PF_STOP_BOUND_NS 1000000000L

// pf_reap reaps children that ended (or stopped) until none waits, the
// agent is among them, or max were taken: it returns the agent's pid
// with its status in *st, 0 when no child waits, -1 when max were reaped
// and more may wait. The bound keeps init responsive: a tree that
// orphans processes as fast as init reaps them held it in an unbounded
// loop, and stage 1's signals, its end and the watch over a stopped
// tree waited meanwhile (a review). Nothing is lost by stopping early:
// what is left waits as a zombie for the next pass.
pid_t pf_reap(pid_t agent, int max, int *st)
{
	for (int i = 0; i < max; i++) {
		pid_t w = waitpid(-1, st, WNOHANG | WUNTRACED);
		if (w <= 0)
			return 0; // none waits (ECHILD: no child at all)
		if (w == agent)
			return agent;
	}
	return -1;
}

// While the agent is stopped, stage 2 looks this often whether all of its
// tree still is (supervise).
#define PF_STOPPED_TICK_MS 5

// pf_stop_tree stops every process of the pid namespace but stage 2 and
// returns 0 once /proc shows them all stopped; 1 when they would not stop
// within PF_STOP_BOUND_NS, or when self (/proc/self; another path only
// in its test) cannot be read (they are killed); 2 when /proc is not the
// namespace's own, so that one round of SIGSTOP is all it could do.
int pf_stop_tree(const char *self)
{
	// /proc must be the pid namespace's own (stage 2 is its pid 1 there):
	// another /proc would show the host's processes, never all stopped.
	// Without it, one round is all that can be done. A link that cannot
	// be read does not say that /proc is another's: it says nothing, and
	// a tree stage 2 cannot look at is not left to the person's shell
	// unwatched (one round was all it got, a review), but killed, as one
	// that will not stop is.
	char pid[16];
	ssize_t n = readlink(self, pid, sizeof pid - 1);
	if (n < 0) {
		int err = errno;
		kill(-1, SIGKILL);
		dprintf(2, "launcher: error: stage 2 cannot read %s (%s), so it cannot tell whether the stopped agent stays stopped: the agent is killed\n", self, strerror(err));
		return 1;
	}
	if (n != 1 || pid[0] != '1') {
		kill(-1, SIGSTOP);
		return 2;
	}
	// The bound is of time, not rounds: a round reads every thread's
	// stat, and a busy tree on a loaded machine made 1000 rounds take
	// seconds, the person's shell waiting (a re-test).
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		kill(-1, SIGSTOP);
		if (all_stopped())
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) > PF_STOP_BOUND_NS)
			break;
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	kill(-1, SIGKILL);
	return 1;
}

// The signals stage 1 relays (relayedSignals in stage2_linux.go).
static const int relayed[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH, SIGUSR1, SIGUSR2};

// grouped counts, per signal, the copies stage 2 had from outside the
// sandbox while it shares stage 1's process group (off a terminal): sent
// to that group, they reached the agent too, and stage 1's relayed copy
// of the same signal would be a second one (an agent that takes a second
// Ctrl-C as "quit now" quit at the first). The kernel queues a group's
// signal to every member before kill returns, and stage 1 relays its copy
// only after that, so stage 2 has its own by the time the relay comes. A
// copy not matched within a second is forgotten: the relay it would have
// matched was lost (a full channel in stage 1), and a later signal sent
// to the launcher alone must not be dropped for it.
static struct {
	unsigned count;
	struct timespec at;
} grouped[65];

// note_signals empties the signalfd, counting what came from outside the
// sandbox (ssi_pid 0: a sender the namespace cannot see, or the kernel's
// terminal). A copy from inside (the agent's kill(0, …)) says nothing
// about stage 1, which the agent cannot signal.
static void note_signals(int sfd)
{
	struct signalfd_siginfo si;
	while (read(sfd, &si, sizeof si) == sizeof si) {
		if (si.ssi_signo == SIGCHLD || si.ssi_pid != 0 || si.ssi_signo >= 65)
			continue;
		grouped[si.ssi_signo].count++;
		clock_gettime(CLOCK_MONOTONIC, &grouped[si.ssi_signo].at);
	}
}

// had_directly reports whether the agent already had sig from the group
// it shares with stage 2, and consumes that copy.
static int had_directly(pid_t agent, int sig, int sfd)
{
	note_signals(sfd);
	if (sig >= 65 || grouped[sig].count == 0)
		return 0;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec - grouped[sig].at.tv_sec > 1) {
		grouped[sig].count = 0;
		return 0;
	}
	grouped[sig].count--;
	return getpgid(agent) == getpgrp();
}

// supervise is init: it reaps every child, relays the signals stage 1
// forwards to the agent, and returns the agent's exit status (128+N for a
// signal). When stage 2 exits, the kernel kills whatever is left in the
// pid namespace. If stage 1 is gone (EOF on the control pipe), nobody
// supervises the agent any more: it is killed.
//
// Job control: when the agent stops (Ctrl-Z on the terminal, SIGSTOP),
// stage 2 tells stage 1 ("stop N"), which takes the terminal back and
// stops itself, so the person's shell gets control; every other process
// of the tree is stopped too (SIGSTOP to all but init). When the shell
// continues stage 1, stage 1 relays SIGCONT, which continues them all. A
// terminating signal relayed to a stopped agent is followed by SIGCONT,
// so that it acts. While stage 1 is stopped and the person's shell has the
// terminal (stage 1 says so: PF_WATCH_BYTE), a process of the tree that
// runs again by itself, continued by a SIGCONT the tree arranged (a timer
// armed with it), would take the terminal from the shell and read what is
// typed (a re-test): stage 2 looks every PF_STOPPED_TICK_MS, and at any
// other wakeup, and kills the whole tree if any of it runs. As root on
// cgroup v2 stage 1 freezes the tree as well, so that it cannot run at all.
static int supervise(pid_t agent, int sfd)
{
	int stopped = 0;  // 1: the tree is stopped; 2: stopped by one round only
	int watching = 0; // stopped, and the person's shell has the terminal
	uint64_t taken = 0; // the stopped tree's mark, since watching began
	for (;;) {
		int st;
		pid_t w = pf_reap(agent, PF_REAP_BATCH, &st);
		if (w == agent && !WIFSTOPPED(st))
			return status_code(st);
		if (w == agent) {
			// The whole tree stops with the agent, whatever process
			// group each is in: one the agent left in a group of its
			// own (ignoring SIGTTOU) would otherwise take the
			// terminal's foreground once the person's shell has it,
			// and read what is typed there. kill(-1) from init spares
			// init alone.
			stopped = 1;
			switch (pf_stop_tree("/proc/self")) {
			case 0:
				break;
			case 2:
				stopped = 2; // one round, unwatched: /proc is not the namespace's
				break;
			default:
				return 128 + SIGKILL;
			}
			dprintf(PF_FD_REPORT, "stop %d\n", WSTOPSIG(st));
		}
		// When children may still wait (the batch ran out, or the
		// agent's stop came first), the poll only looks and does not
		// sleep: their SIGCHLD may have been read already, and the
		// agent's status could wait for a wakeup that never comes.
		struct pollfd fds[2] = {{PF_FD_CONTROL, POLLIN, 0}, {sfd, POLLIN, 0}};
		int ready = poll(fds, 2, w != 0 ? 0 : stopped == 1 && watching ? PF_STOPPED_TICK_MS : -1);
		if (ready < 0 && errno != EINTR)
			return PF_EXIT_FAILED;
		// The tree is looked at on every wakeup but stage 1's, not only
		// when the poll times out: a process of it that runs could
		// otherwise keep stage 2 awake (a SIGCHLD sent to pid 1 more
		// often than every tick) and never be looked at (a review).
		uint64_t now;
		if (stopped == 1 && watching && !fds[0].revents && (!tree_mark(&now) || now != taken)) {
			// Nothing but the shell continuing the launcher may continue
			// a stopped tree; a process that ran since was continued by
			// the tree itself (a timer armed with SIGCONT), and would take
			// the terminal back from the person's shell (a re-test).
			kill(-1, SIGKILL);
			dprintf(2, "launcher: error: a process of the stopped agent ran again by itself: the agent is killed\n");
			return 128 + SIGKILL;
		}
		if (fds[1].revents)
			note_signals(sfd);
		if (fds[0].revents) {
			unsigned char sig;
			ssize_t n = read(PF_FD_CONTROL, &sig, 1);
			if (n == 1 && sig == SIGCONT) {
				stopped = watching = 0;
				kill(-1, SIGCONT);
			} else if (n == 1 && sig == PF_WATCH_BYTE) {
				// The mark is taken now, once stage 1 has frozen the
				// tree (which may wake it in passing) and is about to
				// give the terminal to the shell; a tree that is not all
				// stopped by now, or cannot be read, is killed.
				watching = stopped != 0;
				if (stopped == 1 && (!all_stopped() || !tree_mark(&taken))) {
					kill(-1, SIGKILL);
					dprintf(2, "launcher: error: a process of the stopped agent ran again by itself: the agent is killed\n");
					return 128 + SIGKILL;
				}
			} else if (n == 1) {
				if (!had_directly(agent, sig, sfd))
					kill(agent, sig);
				if (stopped && (sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT)) {
					stopped = watching = 0;
					kill(-1, SIGCONT);
				}
			} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
				kill(agent, SIGKILL);
				return 128 + SIGKILL;
			}
		}
	}
}

// The signals a terminal sends its foreground group for a key (Ctrl-C,
// Ctrl-\, Ctrl-Z).
static void terminal_signals(sigset_t *s)
{
	sigemptyset(s);
	sigaddset(s, SIGINT);
	sigaddset(s, SIGQUIT);
	sigaddset(s, SIGTSTP);
}

// pass_on gives the agent the terminal's signals that came to stage 2
// before the agent was there to have them. Stage 1 gives stage 2's group
// the terminal's foreground just before it says go, so that the agent
// has it from its first instruction; a key pressed in between is sent to
// stage 2 alone, which as the pid namespace's init would drop it (the
// kernel drops a signal init does not handle), and a Ctrl-Z there was
// lost: the agent ran in the foreground, the person's shell waiting (CI,
// 2026-12-02). Held pending since stage 2 began, each is passed on once
// the agent runs. One that came while the agent was being started may
// reach it twice: a second Ctrl-Z or Ctrl-C at once is the same as one.
// Only when stage 2 leads its own group, that of the terminal: otherwise
// it shares stage 1's, and stage 1 relays what is sent to that group.
static void pass_on(pid_t agent, const sigset_t *tty)
{
	sigset_t pending;
	if (getpgrp() == getpid() && sigpending(&pending) == 0) {
		static const int order[] = {SIGINT, SIGQUIT, SIGTSTP};
		for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
			if (!sigismember(&pending, order[i]))
				continue;
			sigset_t one;
			sigemptyset(&one);
			sigaddset(&one, order[i]);
			struct timespec zero = {0, 0};
			if (sigtimedwait(&one, NULL, &zero) == order[i])
				kill(agent, order[i]);
		}
	}
	// From now on the agent has them itself; stage 2 drops its copies.
	if (sigprocmask(SIG_UNBLOCK, tty, NULL) != 0)
		fail("exec", "unblock the terminal's signals: %s", E);
}

static int stage2(void)
{
	// SIGCHLD must not be ignored (an inherited SIG_IGN would reap the
	// agent before its status is read). The terminal's signals are held
	// until the agent runs (pass_on); the agent starts with the mask
	// stage 2 started with.
	// SIGTTOU is held for good: stage 2 writes its errors to the
	// terminal from the background, and with TOSTOP set the kernel would
	// answer each write with a SIGTTOU it drops for init, and the write
	// again, for ever; the watch's kill came after such a write, and a
	// tree that ran by itself read the person's line (a re-test, 7 in 10).
	// A held SIGTTOU lets the write through.
	sigset_t orig, tty, held0;
	terminal_signals(&tty);
	held0 = tty;
	sigaddset(&held0, SIGTTOU);
	if (signal(SIGCHLD, SIG_DFL) == SIG_ERR || sigprocmask(SIG_BLOCK, &held0, &orig) != 0)
		fail("plan", "signal state: %s", E);
	struct plan p;
	read_plan(&p);
	confine(&p);
	// Confined: stage 1 prints its summary, then says go.
	if (write(PF_FD_REPORT, "ready\n", 6) != 6)
		_exit(PF_EXIT_FAILED);
	unsigned char b;
	ssize_t n;
	while ((n = read(PF_FD_CONTROL, &b, 1)) < 0 && errno == EINTR)
		;
	if (n != 1 || b != PF_GO_BYTE)
		_exit(PF_EXIT_FAILED); // stage 1 is gone or changed its mind
	// SIGCHLD is held from before the fork, so no exit is missed.
	sigset_t held;
	sigemptyset(&held);
	sigaddset(&held, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &held, NULL) != 0)
		fail("exec", "block SIGCHLD: %s", E);
	int sfd = signalfd(-1, &held, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		fail("exec", "signalfd: %s", E);
	pid_t agent = start(&p, &orig);
	pass_on(agent, &tty);
	if (getpgrp() != getpid()) {
		// Off a terminal stage 2 shares stage 1's group: what is sent to
		// that group is noted (grouped), not dropped as init's default.
		// Copies that came before the agent ran were dropped by pass_on.
		for (size_t i = 0; i < sizeof relayed / sizeof relayed[0]; i++)
			sigaddset(&held, relayed[i]);
		if (sigprocmask(SIG_BLOCK, &held, NULL) != 0 || signalfd(sfd, &held, 0) != sfd)
			fail("exec", "hold the relayed signals: %s", E);
	}
	if (write(PF_FD_REPORT, "ok\n", 3) != 3)
		_exit(PF_EXIT_FAILED);
	// PF_FD_REPORT stays open: supervise reports the agent's stops on it.
	return supervise(agent, sfd);
}

static int is_pipe(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

// The constructor runs when the launcher binary is loaded, before the Go
// runtime starts. glibc passes it argc and argv. Only the hidden entry
// stage 1 uses makes it act; otherwise it returns and Go starts as usual.
__attribute__((constructor)) static void pf_stage2_entry(int argc, char **argv, char **envp)
{
	(void)envp;
	if (argc >= 2 && argv && argv[1] && strcmp(argv[1], PF_HOLD_ENTRY) == 0) {
		// A user namespace's only process, holding it while stage 1
		// writes its maps and opens it (IdmapUserNS): it waits for the
		// end of its standard input, does nothing else, and exits.
		char b;
		for (;;) {
			ssize_t n = read(0, &b, 1);
			if (n == 0 || (n < 0 && errno != EINTR))
				break;
		}
		_exit(0);
	}
	if (argc < 2 || !argv || !argv[1] || strcmp(argv[1], PF_STAGE2_ENTRY) != 0) {
		// Go starts next, and touches the image all over (image_linux.c).
		pf_populate_image();
		return;
	}
	// Started by hand, or by anything but stage 1, it writes nothing
	// anywhere: its three descriptors must be pipes, and it must be the
	// first process of a new pid namespace (so its mount namespace is new
	// too, and nothing it mounts reaches the host).
	if (!is_pipe(PF_FD_REPORT) || !is_pipe(PF_FD_PLAN) || !is_pipe(PF_FD_CONTROL) || getpid() != 1) {
		dprintf(2, "launcher: error: %s is internal to the launcher and runs only as its stage 2\n", PF_STAGE2_ENTRY);
		_exit(PF_EXIT_FAILED);
	}
	_exit(stage2());
}
