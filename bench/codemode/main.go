// Command codemode measures Code Mode: the latency of one script — the
// static check, starting a confined worker process and running a script
// that makes 10 tool calls — and how many such scripts per second the
// machine sustains with one runner per CPU (the target is 100 on
// 2 cores). For reference it measures the same script run in this
// process, without a worker: what the worker's process and confinement
// add is the difference. The worker is the launcher binary (-launcher,
// built by bench/run), as in a session.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pinfold/pinfold/components/code"
	"github.com/pinfold/pinfold/policy"
)

const script = `let total = 0;
for (let i = 0; i < 10; i++) {
  const r = await pinfold.call("read_file", {path: "f" + i});
  total += r.content.length;
}
pinfold.log("read", total);
return {total};`

func main() {
	launcher := flag.String("launcher", "bin/launcher", "the launcher binary, run as the worker")
	n := flag.Int("n", 200, "scripts timed one at a time")
	secs := flag.Duration("for", 5*time.Second, "how long the throughput run lasts")
	flag.Parse()
	c := policy.Default().CodeMode
	lim := code.Limits{Memory: int64(c.Memory), Stack: int64(c.Stack), Deadline: time.Duration(c.Deadline),
		ToolCalls: int(c.ToolCalls), Output: int(c.Output), ScriptSize: int(c.ScriptSize)}
	tool := func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"content":"0123456789"}`), nil
	}
	exe, err := filepath.Abs(*launcher) // the worker starts in /
	check(err)
	argv := []string{exe, code.WorkerEntry}
	one := func() error {
		if fs := code.Validate(script); fs != nil {
			return fmt.Errorf("rejected: %v", fs)
		}
		res, err := code.Spawn(context.Background(), argv, script, lim, tool)
		if err == nil && string(res.Value) != `{"total":100}` {
			err = fmt.Errorf("value %s", res.Value)
		}
		return err
	}
	inProcess := func() error {
		if fs := code.Validate(script); fs != nil {
			return fmt.Errorf("rejected: %v", fs)
		}
		_, err := code.Run(context.Background(), script, lim, tool)
		return err
	}
	check(one()) // warm the page cache
	worker := timeIt(*n, one)
	local := timeIt(*n, inProcess)
	fmt.Printf("Code Mode: validate + worker + 10 tool calls, %d each (median, p90)\n", *n)
	fmt.Printf("%-34s %9s %9s\n", "in this process (no worker)", ms(pct(local, 50)), ms(pct(local, 90)))
	fmt.Printf("%-34s %9s %9s\n", "in a confined worker", ms(pct(worker, 50)), ms(pct(worker, 90)))
	fmt.Printf("worker / in process: %.1f\n", float64(pct(worker, 50))/float64(pct(local, 50)))

	cpus := runtime.NumCPU()
	var done atomic.Int64
	var failed atomic.Value
	stop := time.Now().Add(*secs)
	var wg sync.WaitGroup
	for range cpus {
		wg.Go(func() {
			for time.Now().Before(stop) {
				if err := one(); err != nil {
					failed.Store(err)
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		check(err)
	}
	rate := float64(done.Load()) / secs.Seconds()
	fmt.Printf("sustained, %d runners on %d CPUs: %.0f scripts/s (target ≥ 100)\n", cpus, cpus, rate)
}

func timeIt(n int, f func() error) []time.Duration {
	out := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		check(f())
		out = append(out, time.Since(start))
	}
	slices.Sort(out)
	return out
}

func pct(d []time.Duration, p int) time.Duration { return d[(len(d)-1)*p/100] }

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "codemode:", err)
		os.Exit(1)
	}
}
