// The C stage 2's interface to Go (stage2_cgo_linux.go): the plan as C
// sees it, for the round-trip test, and the no-follow open.
#ifndef PINFOLD_STAGE2_H
#define PINFOLD_STAGE2_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/filter.h>

#define PF_STAGE2_ENTRY "__pinfold_stage2"
#define PF_HOLD_ENTRY "__pinfold_hold"

// The descriptors stage 1 passes, in this order after stdio.
enum {
	PF_FD_PLAN = 3,    // stage 1 → stage 2: the plan
	PF_FD_REPORT = 4,  // stage 2 → stage 1: "ready" when confined, "ok" when the agent runs, or "error: STEP: WHAT"; then "stop N" each time the agent stops
	PF_FD_CONTROL = 5, // stage 1 → stage 2: the go byte, then forwarded signals, one byte each; EOF: stage 1 died
	PF_FD_JOIN = 6,    // and on: the v1 cgroup tasks files stage 2 joins (plan.njoin of them)
};

enum {
	PF_GO_BYTE = 0,       // on the control pipe: start the agent
	PF_WATCH_BYTE = 255,  // on the control pipe, while the agent is stopped: the person's shell has the terminal, and nothing of the tree may run
	PF_EXIT_FAILED = 125, // stage 2's status when it could not start the agent
	PF_EXIT_CANNOT_RUN = 126, // ... because the agent's execve failed, other than ENOENT (as env(1))
	PF_EXIT_NOT_FOUND = 127,  // ... because the agent's execve said ENOENT (as env(1))
	PF_REAP_BATCH = 64,   // children init reaps before it looks at its pipes again
};

struct block;

struct tree {
	char *path;
	int write, exec, idmap;
	uint32_t owner;
	int fd, origin, dir;    // the detached clone and where it came from
	uint64_t dev, ino;      // what origin is
};

struct mask {
	char *path;
	int dir; // covered by an empty tmpfs, else by /dev/null
};

struct rlim {
	uint32_t resource;
	char *name;
	uint64_t value;
	int at_most;
};

struct path_rule {
	char *path;
	uint64_t access;
};

struct port_rule {
	uint64_t port, access;
};

struct plan {
	char **argv, *path, **env, *dir;
	uint32_t njoin;
	char **hide;
	uint32_t nhide;
	uint64_t tmp_size;
	char *home;
	struct tree *trees;
	uint32_t ntrees;
	struct mask *masks;
	uint32_t nmasks;
	int memfd, new_net;
	uint32_t proxy_port; // not 0: make the proxy's listener, 127.0.0.1:proxy_port, and hand it over
	struct rlim *rlimits;
	uint32_t nrlimits;
	int setuid;
	uint32_t uid, gid, owner, owner_gid;
	uint32_t abi;
	uint64_t handled_fs, handled_net, scoped;
	struct path_rule *paths;
	uint32_t npaths;
	struct port_rule *ports;
	uint32_t nports;
	struct sock_filter *filter;
	uint32_t nfilter;
	struct block *mem; // every allocation, for pf_free_plan
};

// pf_decode_plan decodes what Plan.MarshalBinary wrote. It returns NULL,
// or what is wrong.
const char *pf_decode_plan(const unsigned char *buf, size_t len, struct plan *p);
void pf_free_plan(struct plan *p);
int pf_open_nofollow(const char *path);
int pf_mount_point(struct plan *p, uint32_t n, const char *cover, char **where, int *made);
// Whether every thread of a process is stopped or gone (stop_tree).
int pf_threads_stopped(long pid);
int pf_process_mark(long pid, uint64_t *m);
int pf_thread_runs(const char *schedstat, const char *status, uint64_t *v);
// Stops the agent's tree (supervise), reading self to tell the pid
// namespace's /proc.
int pf_stop_tree(const char *self);
// Init's reaping (supervise): at most max children per pass.
pid_t pf_reap(pid_t agent, int max, int *st);

// Maps the executable's read-only segments at once (image_linux.c).
void pf_populate_image(void);

#endif
