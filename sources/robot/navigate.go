package robot

import (
	"context"

	"github.com/devgraph/devgraph/graph"
)

type navStart struct {
	Goal     graph.Point `json:"goal"`
	TimeoutS float64     `json:"timeout_s"`
}

// Navigate drives the robot to goal and blocks until the navigation ends; see the package
// comment for the outcomes. A refused goal is an error and moves nothing; every other
// outcome is a result. Start and end are changelog events (the end with the caller's
// actor and request id even when the caller has gone).
func (f *Fleet) Navigate(ctx context.Context, ref string, goal graph.Goal, progress func(graph.NavProgress)) (*graph.NavResult, error) {
	m, err := f.lookup(ref)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	if !f.running {
		f.mu.Unlock()
		return nil, f.isRunning()
	}
	f.navs++
	f.mu.Unlock()
	defer f.navDone()

	if err := m.b.CheckGoal(goal); err != nil {
		return nil, err
	}
	before := summarize(m.b.Status())
	if err := f.save(ctx, m, graph.ActRobotNavStart, before, navStart{Goal: graph.Point{X: goal.X, Y: goal.Y}, TimeoutS: goal.TimeoutS}); err != nil {
		return nil, err
	}
	res, err := m.b.Navigate(ctx, goal, progress)
	if err != nil {
		return nil, err
	}
	bg := context.WithoutCancel(ctx)
	if err := f.save(bg, m, graph.ActRobotNavEnd, navStart{Goal: graph.Point{X: goal.X, Y: goal.Y}, TimeoutS: goal.TimeoutS}, res); err != nil {
		f.log.Warn("robot: record navigation end", "robot", m.ref, "err", err)
	}
	return res, nil
}
