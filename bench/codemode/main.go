// Command codemode measures Code Mode: the latency of one script — the
// static check, starting a confined worker process and running a script
// that makes 10 tool calls — and how many such scripts per second the
// machine sustains with one runner per CPU (the target is 100 on
// 2 cores). For reference it measures the same script run in this
// process, without a worker: what the worker's process and confinement
// add is the difference. The worker is the launcher binary (-launcher,
// built by bench/run), as in a session.
//
// With -json FILE it also writes bench/report Reports: the latency to FILE
// (rows "in this process (no worker)" and "in a confined worker", median
// and p90 in ms, the ratio in its notes) and the sustained rate to FILE
// with "-rate" before ".json" (one row, scripts/s, the printed line with
// its target in its notes).
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

	"github.com/pinfold/pinfold/bench/report"
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
	out := flag.String("json", "", "also write the latency to this file and the rate to its -rate sibling, as bench/report JSON reports")
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
	ratio := fmt.Sprintf("worker / in process: %.1f", float64(pct(worker, 50))/float64(pct(local, 50)))
	fmt.Println(ratio)

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
	sustained := fmt.Sprintf("sustained, %d runners on %d CPUs", cpus, cpus)
	rateLine := fmt.Sprintf("%s: %.0f scripts/s (target ≥ 100)", sustained, rate)
	fmt.Println(rateLine)

	if *out != "" {
		lat := report.NewReport("codemode", fmt.Sprintf("Latency of one Code Mode script (validate, then 10 tool calls), in this process and in a confined worker (%d each).", *n), "ms", report.Lower)
		lat.Add("in this process (no worker)", msf(pct(local, 50)), msf(pct(local, 90)), len(local))
		lat.Add("in a confined worker", msf(pct(worker, 50)), msf(pct(worker, 90)), len(worker))
		lat.Notes = []string{ratio}
		check(lat.WriteFile(*out))
		rt := report.NewReport("codemode", fmt.Sprintf("Code Mode scripts a second, each in a confined worker, one runner per CPU for %v.", *secs), "scripts/s", report.Higher)
		rt.Date = lat.Date
		rt.Add(sustained, rate, 0, 1)
		rt.Notes = []string{rateLine}
		check(rt.WriteFile(report.WithSuffix(*out, "-rate")))
	}
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

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", msf(d)) }

func msf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "codemode:", err)
		os.Exit(1)
	}
}
