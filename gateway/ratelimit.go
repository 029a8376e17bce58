package gateway

import (
	"container/heap"
	"fmt"
	"math"
	"net/netip"
	"sync"
	"time"
)

// Limiter limits failed authentications per peer with a token bucket of
// failures: a peer may fail burst times, and regains one try every
// `every`. Ask Allow before checking a peer's credential, and call Fail
// when the check fails; success costs nothing. Safe for concurrent use.
//
// Peers are grouped as an attacker holds addresses: an IPv4-mapped IPv6
// address is its IPv4 address (::ffff:1.2.3.4 is 1.2.3.4), an IPv6 peer
// is its /64 (whoever has one address of a /64 usually has them all),
// and the zone is ignored. An invalid address (an unknown peer) is one
// peer. Every IPv4 address is its own peer, so people behind one NAT
// share a bucket.
//
// Memory is bounded: at most maxPeers buckets. When a new peer fails and
// the table is full, the fullest bucket is forgotten: one fully refilled
// first (forgetting it changes nothing), else the one that will be full
// again soonest. The trade-off: forgetting a peer gives it its burst
// back early. But a bucket is forgotten only when each of the maxPeers
// others is at least as drained (owes at least as many failures), so to
// win back n tries an attacker must first fail about n times from each of
// maxPeers other peers (networks) — tries those peers had anyway. An
// attacker with more networks than maxPeers gets burst tries per network
// and one per network per `every`: the limit is per peer, not global.
// A bucket never owes more than burst failures, whatever Fail is called
// on a refused peer, so retryAfter is at most every.
//
// Owner tokens are 256 random bits, so the limiter does not protect them
// from guessing (nothing could guess one); it keeps a prober from
// burning CPU on hashing and the store, and from filling the logs.
type Limiter struct {
	burst    int
	every    time.Duration
	maxPeers int

	mu    sync.Mutex
	peers map[netip.Addr]*failBucket
	order failHeap // every bucket, the one full again soonest first
}

// failBucket is one peer's failures, kept as the time its bucket is full
// again: each failure moves it `every` later, but never more than
// burst×every past the failure.
type failBucket struct {
	peer netip.Addr
	full time.Time
	at   int // index in Limiter.order
}

// NewLimiter returns a Limiter that allows burst failures per peer,
// regains one every `every`, and remembers at most maxPeers peers. It
// panics if any is not positive or burst×every overflows, like
// time.NewTicker: these are the program's constants, not input.
func NewLimiter(burst int, every time.Duration, maxPeers int) *Limiter {
	if burst < 1 || every <= 0 || maxPeers < 1 || int64(every) > math.MaxInt64/int64(burst)/2 {
		panic(fmt.Sprintf("gateway: NewLimiter(%d, %v, %d): want positive burst, every and maxPeers, and burst×every well within time.Duration", burst, every, maxPeers))
	}
	return &Limiter{
		burst:    burst,
		every:    every,
		maxPeers: maxPeers,
		peers:    make(map[netip.Addr]*failBucket),
	}
}

// Allow says whether peer may try to authenticate at now: whether its
// bucket has a failure left. If not, retryAfter is how long until it has.
func (l *Limiter) Allow(peer netip.Addr, now time.Time) (ok bool, retryAfter time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.peers[limitKey(peer)]
	if b == nil {
		return true, 0
	}
	// The bucket owes owed/every failures; one more is allowed while it
	// owes at most burst-1.
	owed := b.full.Sub(now)
	slack := time.Duration(l.burst-1) * l.every
	if owed <= slack {
		return true, 0
	}
	return false, owed - slack
}

// Fail records one failed attempt by peer at now.
func (l *Limiter) Fail(peer netip.Addr, now time.Time) {
	key := limitKey(peer)
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.peers[key]
	if b == nil {
		if len(l.peers) >= l.maxPeers {
			gone := heap.Pop(&l.order).(*failBucket)
			delete(l.peers, gone.peer)
		}
		b = &failBucket{peer: key, full: now}
		l.peers[key] = b
		heap.Push(&l.order, b)
	}
	full := b.full
	if full.Before(now) {
		full = now
	}
	full = full.Add(l.every)
	if limit := now.Add(time.Duration(l.burst) * l.every); full.After(limit) {
		full = limit
	}
	b.full = full
	heap.Fix(&l.order, b.at)
}

// limitKey is the peer an address belongs to: IPv4 for a v4-mapped
// address, the /64 for IPv6, without a zone, and all of 127.0.0.0/8 one
// peer, as ::1's /64 is: any local user may connect from each of its
// 16M addresses, and counted apart they gave one such user a guest
// share and a failure bucket per address (a red team, 2026-12-03).
func limitKey(a netip.Addr) netip.Addr {
	a = a.Unmap().WithZone("")
	if a.Is4() && a.IsLoopback() {
		return netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	if a.Is6() {
		p, err := a.Prefix(64)
		if err == nil {
			return p.Addr()
		}
	}
	return a
}

// failHeap orders buckets by when they are full again, soonest first:
// the fullest bucket is at the top.
type failHeap []*failBucket

func (h failHeap) Len() int           { return len(h) }
func (h failHeap) Less(i, j int) bool { return h[i].full.Before(h[j].full) }
func (h failHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].at, h[j].at = i, j
}

func (h *failHeap) Push(x any) {
	b := x.(*failBucket)
	b.at = len(*h)
	*h = append(*h, b)
}

func (h *failHeap) Pop() any {
	old := *h
	b := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return b
}
