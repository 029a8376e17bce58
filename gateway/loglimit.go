package gateway

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Lines any caller can cause with one request, without starting a
// session (a guest asking for full access, a bad token, the SDK's own
// refusals), go to the gateway's log at most requestLineBurst at once
// and then one every requestLineEvery: at the rate requests come they
// would fill the disk that log is on. Each line that goes through after
// some were left out says how many ("dropped").
const (
	requestLineBurst = 200
	requestLineEvery = 100 * time.Millisecond
)

// limitedHandler is a slog.Handler that passes records while its budget
// allows and drops the rest, counting them.
type limitedHandler struct {
	slog.Handler
	budget *lineBudget
}

// lineBudget is a token bucket kept as the time it is full again, as
// Limiter's buckets are; handlers derived by With share it.
type lineBudget struct {
	mu      sync.Mutex
	burst   int
	every   time.Duration
	full    time.Time
	dropped int
}

func newLimitedLogger(h slog.Handler, burst int, every time.Duration) *slog.Logger {
	return slog.New(limitedHandler{h, &lineBudget{burst: burst, every: every}})
}

// take spends one line at now: false if none is left; else how many
// were dropped since the last line that went through.
func (b *lineBudget) take(now time.Time) (ok bool, dropped int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.full.Before(now) {
		b.full = now
	}
	if b.full.Sub(now) >= time.Duration(b.burst)*b.every {
		b.dropped++
		return false, 0
	}
	b.full = b.full.Add(b.every)
	dropped, b.dropped = b.dropped, 0
	return true, dropped
}

func (h limitedHandler) Handle(ctx context.Context, r slog.Record) error {
	ok, dropped := h.budget.take(time.Now())
	if !ok {
		return nil
	}
	if dropped > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int("dropped", dropped))
	}
	return h.Handler.Handle(ctx, r)
}

func (h limitedHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return limitedHandler{h.Handler.WithAttrs(attrs), h.budget}
}

func (h limitedHandler) WithGroup(name string) slog.Handler {
	return limitedHandler{h.Handler.WithGroup(name), h.budget}
}
