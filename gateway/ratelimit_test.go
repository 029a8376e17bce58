package gateway

import (
	"container/heap"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"
)

var limT0 = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

func limAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

func wantAllow(t *testing.T, l *Limiter, peer string, now time.Time, ok bool, retry time.Duration) {
	t.Helper()
	gotOK, gotRetry := l.Allow(limAddr(peer), now)
	if gotOK != ok || gotRetry != retry {
		t.Errorf("Allow(%s, +%v) = %v, %v; want %v, %v", peer, now.Sub(limT0), gotOK, gotRetry, ok, retry)
	}
}

func TestLimiterBurstAndRefill(t *testing.T) {
	l := NewLimiter(3, 10*time.Second, 100)
	p := "192.0.2.1"
	wantAllow(t, l, p, limT0, true, 0) // never failed
	for i := range 3 {
		wantAllow(t, l, p, limT0, true, 0)
		l.Fail(limAddr(p), limT0.Add(time.Duration(i)*time.Millisecond))
	}
	// Three failures from +0 to +2ms: each owes 10s from the first, so
	// the bucket is empty until +10s.
	wantAllow(t, l, p, limT0.Add(2*time.Millisecond), false, 10*time.Second-2*time.Millisecond)
	wantAllow(t, l, p, limT0.Add(4*time.Second), false, 6*time.Second)
	wantAllow(t, l, p, limT0.Add(10*time.Second-time.Nanosecond), false, time.Nanosecond)
	// Another peer is not affected.
	wantAllow(t, l, "192.0.2.2", limT0, true, 0)
	// One try back after `every`, and only one.
	now := limT0.Add(10 * time.Second)
	wantAllow(t, l, p, now, true, 0)
	l.Fail(limAddr(p), now)
	wantAllow(t, l, p, now, false, 10*time.Second)
	// Failing while refused does not dig deeper: retryAfter stays ≤ every.
	for range 100 {
		l.Fail(limAddr(p), now)
	}
	wantAllow(t, l, p, now, false, 10*time.Second)
	// Fully refilled after burst×every: a whole burst again.
	now = now.Add(30 * time.Second)
	for range 3 {
		wantAllow(t, l, p, now, true, 0)
		l.Fail(limAddr(p), now)
	}
	wantAllow(t, l, p, now, false, 10*time.Second)
	// Two tries back after 2×every, partial refill counted exactly.
	wantAllow(t, l, p, now.Add(20*time.Second-time.Nanosecond), true, 0)
	wantAllow(t, l, p, now.Add(10*time.Second-time.Nanosecond), false, time.Nanosecond)
}

func TestLimiterBurstOne(t *testing.T) {
	l := NewLimiter(1, time.Minute, 10)
	l.Fail(limAddr("2001:db8::1"), limT0)
	wantAllow(t, l, "2001:db8::1", limT0, false, time.Minute)
	wantAllow(t, l, "2001:db8::1", limT0.Add(time.Minute), true, 0)
}

// Peers are grouped as an attacker holds addresses.
func TestLimitKey(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"1.2.3.4", "::ffff:1.2.3.4"},
		{"2001:db8::1", "2001:db8::ffff:ffff:ffff:ffff"},
		{"2001:db8:0:1::", "2001:db8:0:1:8000::1"},
		{"fe80::1%eth0", "fe80::1%eth1"},
		{"fe80::1%eth0", "fe80::2"},
		{"::1", "::2"},
		{"127.0.0.1", "127.0.0.2"},
		{"127.0.0.1", "127.255.255.254"},
		{"::ffff:127.1.2.3", "127.0.0.1"},
	} {
		if ka, kb := limitKey(limAddr(tc.a)), limitKey(limAddr(tc.b)); ka != kb {
			t.Errorf("%s and %s are peers %s and %s, want one", tc.a, tc.b, ka, kb)
		}
	}
	// Just outside: a different /64, the next IPv4 address, v4 vs. the
	// v4-compatible (not mapped) v6 address.
	for _, tc := range []struct{ a, b string }{
		{"2001:db8::1", "2001:db8:0:1::1"},
		{"2001:db8:0:ffff::", "2001:db8:1::"},
		{"1.2.3.4", "1.2.3.5"},
		{"1.2.3.4", "::1.2.3.4"},
		{"1.2.3.4", "::ffff:1.2.3.5"},
		{"0.0.0.0", "::"},
		{"127.0.0.1", "::1"},
		{"127.0.0.1", "128.0.0.1"},
		{"126.255.255.255", "127.0.0.1"},
	} {
		if ka, kb := limitKey(limAddr(tc.a)), limitKey(limAddr(tc.b)); ka == kb {
			t.Errorf("%s and %s are one peer %s, want two", tc.a, tc.b, ka)
		}
	}
	if k := limitKey(netip.Addr{}); k.IsValid() {
		t.Errorf("the zero Addr is peer %s", k)
	}
}

// The grouping holds in the Limiter: failures from ::ffff:1.2.3.4 count
// against 1.2.3.4, and from one address of a /64 against another.
func TestLimiterGrouping(t *testing.T) {
	l := NewLimiter(2, time.Minute, 100)
	l.Fail(limAddr("1.2.3.4"), limT0)
	l.Fail(limAddr("::ffff:1.2.3.4"), limT0)
	wantAllow(t, l, "1.2.3.4", limT0, false, time.Minute)
	wantAllow(t, l, "::ffff:1.2.3.4", limT0, false, time.Minute)
	wantAllow(t, l, "1.2.3.5", limT0, true, 0) // control

	l.Fail(limAddr("2001:db8:0:7::1"), limT0)
	l.Fail(limAddr("2001:db8:0:7:dead:beef:0:1%eth0"), limT0)
	wantAllow(t, l, "2001:db8:0:7:ffff::", limT0, false, time.Minute)
	wantAllow(t, l, "2001:db8:0:8::1", limT0, true, 0) // control

	// Unknown peers (the zero Addr) share one bucket.
	l.Fail(netip.Addr{}, limT0)
	l.Fail(netip.Addr{}, limT0)
	if ok, _ := l.Allow(netip.Addr{}, limT0); ok {
		t.Error("the zero Addr was allowed after a burst of failures")
	}
}

func checkLimiter(t *testing.T, l *Limiter) {
	t.Helper()
	if len(l.peers) != len(l.order) || len(l.peers) > l.maxPeers {
		t.Fatalf("%d peers, %d in order, max %d", len(l.peers), len(l.order), l.maxPeers)
	}
	for i, b := range l.order {
		if b.at != i || l.peers[b.peer] != b {
			t.Fatalf("bucket %d (%s) is out of place", i, b.peer)
		}
		if i > 0 && l.order[(i-1)/2].full.After(b.full) {
			t.Fatalf("bucket %d is fuller than its parent", i)
		}
	}
}

// Memory stays at maxPeers under a flood of distinct addresses, and the
// flood does not reset a drained bucket: the fullest are forgotten first.
func TestLimiterBoundedUnderFlood(t *testing.T) {
	const maxPeers = 1000
	l := NewLimiter(5, time.Minute, maxPeers)
	attacker := limAddr("198.51.100.7")
	for range 5 {
		l.Fail(attacker, limT0)
	}
	// An old, fully refilled entry: it goes first.
	l.Fail(limAddr("203.0.113.1"), limT0.Add(-time.Hour))
	now := limT0.Add(time.Second)
	for i := range 100_000 {
		var a netip.Addr
		if i%2 == 0 {
			a = netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		} else {
			a = netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)})
		}
		l.Fail(a, now)
		if len(l.peers) > maxPeers {
			t.Fatalf("%d peers after %d addresses, max %d", len(l.peers), i+1, maxPeers)
		}
	}
	checkLimiter(t, l)
	if len(l.peers) != maxPeers {
		t.Errorf("%d peers, want %d", len(l.peers), maxPeers)
	}
	if _, ok := l.peers[limitKey(limAddr("203.0.113.1"))]; ok {
		t.Error("the refilled entry was kept while drained ones were forgotten")
	}
	if ok, retry := l.Allow(attacker, now); ok || retry != 59*time.Second {
		t.Errorf("after the flood the attacker is allowed=%v retry=%v; want refused for 59s", ok, retry)
	}

	// The attacker is forgotten only once maxPeers others owe more than
	// it does: here, peers that fail the whole burst a little later.
	later := now.Add(time.Second)
	for i := range maxPeers {
		a := netip.AddrFrom4([4]byte{172, 16, byte(i >> 8), byte(i)})
		for range 5 {
			l.Fail(a, later)
		}
	}
	checkLimiter(t, l)
	if ok, _ := l.Allow(attacker, later); !ok {
		t.Error("the attacker was kept although every other peer owed more")
	}
}

func TestLimiterConcurrent(t *testing.T) {
	l := NewLimiter(3, time.Millisecond, 64)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 2000 {
				a := netip.AddrFrom4([4]byte{10, 0, byte(g), byte(i % 100)})
				if ok, _ := l.Allow(a, time.Now()); ok {
					l.Fail(a, time.Now())
				}
			}
		})
	}
	wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	checkLimiter(t, l)
}

func TestNewLimiterPanics(t *testing.T) {
	for _, args := range [][3]int64{
		{0, int64(time.Second), 1},
		{1, 0, 1},
		{1, int64(time.Second), 0},
		{-1, int64(time.Second), 1},
		{1 << 40, int64(time.Hour), 1},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewLimiter%v did not panic", args)
				}
			}()
			NewLimiter(int(args[0]), time.Duration(args[1]), int(args[2]))
		}()
	}
	NewLimiter(1, time.Nanosecond, 1) // control
}

var _ heap.Interface = (*failHeap)(nil)

func ExampleLimiter() {
	l := NewLimiter(2, time.Minute, 10_000)
	peer := netip.MustParseAddr("::ffff:192.0.2.1")
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for range 3 {
		ok, retry := l.Allow(peer, now)
		fmt.Println(ok, retry)
		if ok {
			l.Fail(peer, now) // the credential was wrong
		}
	}
	// Output:
	// true 0s
	// true 0s
	// false 1m0s
}
