package robot

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
)

// BenchmarkSimStep measures the simulator's cost per robot per tick with 50 robots all
// navigating (controller, limits, integration, geofence, two obstacles, progress and a
// subscriber on), reported as ns/robot-tick.
func BenchmarkSimStep(b *testing.B) {
	for _, moving := range []bool{true, false} {
		name := "navigating"
		if !moving {
			name = "idle"
		}
		b.Run(name, func(b *testing.B) {
			const n = 50
			p := DefaultParams()
			p.LowBattery = 0
			fence := []graph.Point{{X: -9000, Y: -9000}, {X: 9000, Y: -9000}, {X: 9000, Y: 9000}, {X: -9000, Y: 9000}}
			clk := NewFakeClock(t0)
			f, err := NewFleet(Options{Now: clk.Now, Every: clk.Every, Params: &p, Geofence: fence})
			if err != nil {
				b.Fatal(err)
			}
			must2(b, f.AddObstacle(Obstacle{ID: "a", X: 0, Y: -50, R: 1}))
			must2(b, f.AddObstacle(Obstacle{ID: "b", X: 0, Y: 500, R: 1}))
			for i := range n {
				must2(b, f.AddSim(fmt.Sprintf("r%02d", i), 0, float64(i)))
			}
			var updates atomic.Int64
			cancel := f.Subscribe(func(string, graph.RobotState) { updates.Add(1) })
			defer cancel()
			must2(b, f.Open())
			defer f.Close()
			w := f.world
			w.mu.Lock()
			for i, r := range w.robots {
				r.armed = true
				if moving {
					r.state = graph.RobotNavigating
					r.nav = &nav{goal: graph.Point{X: 8000, Y: float64(i)}, start: w.now, deadline: w.now.Add(1e6 * time.Second),
						done: make(chan struct{}), progCh: make(chan struct{}, 1), lastProg: w.now}
				}
			}
			at := w.now
			w.mu.Unlock()
			b.ResetTimer()
			for range b.N {
				at = at.Add(w.dt)
				w.tick(at)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/robot-tick")
			b.ReportMetric(0, "ns/op")
			w.mu.Lock()
			for _, r := range w.robots {
				if moving && r.nav == nil {
					b.Fatalf("%s stopped navigating during the benchmark", r.ref)
				}
			}
			w.mu.Unlock()
		})
	}
}

func must2(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkFleet50RealClock runs 50 robots navigating at once on the real clock at the
// full 50 Hz tick rate for 5 s, with progress callbacks and a subscriber that encodes
// every update as JSON (as an MCP notification would), and reports the p99 lateness of
// ticks against their schedule.
func BenchmarkFleet50RealClock(b *testing.B) {
	const n = 50
	const run = 5 * time.Second
	var all []time.Duration
	var took []time.Duration
	var updates, progress atomic.Int64
	for range b.N {
		var mu sync.Mutex
		var lates, tooks []time.Duration
		f, err := NewFleet(Options{
			TickObserver: func(late, t time.Duration) {
				mu.Lock()
				lates = append(lates, late)
				tooks = append(tooks, t)
				mu.Unlock()
			},
		})
		must2(b, err)
		must2(b, f.AddObstacle(Obstacle{ID: "pillar", X: -20, Y: 0, R: 1}))
		for i := range n {
			must2(b, f.AddSim(fmt.Sprintf("r%02d", i), float64(i%10)*3, float64(i/10)*3))
		}
		cancel := f.Subscribe(func(ref string, st graph.RobotState) {
			if _, err := json.Marshal(st); err == nil {
				updates.Add(1)
			}
		})
		must2(b, f.Open())
		ctx, stop := context.WithTimeout(graph.WithActor(context.Background(), "bench"), run)
		var wg sync.WaitGroup
		for i := range n {
			ref := fmt.Sprintf("robot:r%02d", i)
			if _, err := f.Arm(ctx, ref); err != nil {
				b.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := f.Navigate(ctx, ref, graph.Goal{X: float64(i%10)*3 + 40, Y: float64(i/10)*3 + 10}, func(p graph.NavProgress) {
					if _, err := json.Marshal(p); err == nil {
						progress.Add(1)
					}
				})
				if err != nil || res.Status != graph.NavCancelled {
					b.Errorf("%s: %v %v, want cancelled after the run", ref, res, err)
				}
			}()
		}
		wg.Wait()
		stop()
		cancel()
		f.Close()
		all = append(all, lates...)
		took = append(took, tooks...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	pct := func(d []time.Duration, q float64) float64 {
		return float64(d[int(q*float64(len(d)-1))]) / 1e6
	}
	secs := float64(b.N) * run.Seconds()
	b.ReportMetric(pct(all, 0.50), "p50-late-ms")
	b.ReportMetric(pct(all, 0.99), "p99-late-ms")
	b.ReportMetric(pct(all, 1), "max-late-ms")
	b.ReportMetric(pct(took, 0.99), "p99-tick-ms")
	b.ReportMetric(float64(len(all))/secs, "ticks/s")
	b.ReportMetric(float64(updates.Load())/secs, "updates/s")
	b.ReportMetric(float64(progress.Load())/secs, "progress/s")
}
