package robot

import (
	"math"
	"sync"
	"time"

	"github.com/devgraph/devgraph/graph"
)

// Obstacle is a circular obstacle in the simulated world.
type Obstacle struct {
	ID string  `json:"id"`
	X  float64 `json:"x"`
	Y  float64 `json:"y"`
	R  float64 `json:"r"` // radius, m
}

// Object is a thing in the simulated world robots can detect, grasp and carry.
type Object struct {
	ID     string  `json:"id"`
	Kind   string  `json:"kind"`
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	HeldBy string  `json:"held_by,omitempty"` // robot ref
}

// world is the simulated world: every simulated robot, the obstacles and the objects,
// guarded by one mutex and stepped by one tick loop for the whole fleet.
type world struct {
	mu        sync.Mutex
	clock     func() time.Time // Options.Now
	every     EveryFunc        // Options.Every
	dt        time.Duration
	now       time.Time // simulation time of the last step
	last      time.Time // scheduled time of the last tick processed
	robots    []*simRobot
	obstacles []Obstacle
	objects   []*Object
	// notify is called with mu held on every state change and, while a robot moves, at
	// most every NotifyEvery; rest is true when a robot has just come to rest. It must not
	// block (the fleet queues).
	notify  func(r *simRobot, rest bool)
	observe func(late, took time.Duration)
	stop    func()
	closed  bool // the tick loop has ended: no navigation can start
}

func (w *world) start() {
	w.mu.Lock()
	w.now = w.clock()
	w.mu.Unlock()
	w.stop = w.every(w.dt, w.tick)
}

// tick integrates the fixed steps that fell due by the tick's scheduled time.
func (w *world) tick(at time.Time) {
	begin := w.clock()
	w.mu.Lock()
	n := 1
	if !w.last.IsZero() {
		if k := int(at.Sub(w.last) / w.dt); k > 1 {
			n = min(k, maxCatchUp)
		}
	}
	w.last = at
	dt := w.dt.Seconds()
	for range n {
		w.now = w.now.Add(w.dt)
		for _, r := range w.robots {
			r.step(dt)
		}
	}
	w.mu.Unlock()
	if w.observe != nil {
		w.observe(begin.Sub(at), w.clock().Sub(begin))
	}
}

func (w *world) object(id string) *Object {
	for _, o := range w.objects {
		if o.ID == id {
			return o
		}
	}
	return nil
}

// pathBlocked reports the obstacle (inflated by RobotRadius) that the straight segment
// from a to b runs into, if any. When a already lies inside one, only heading deeper into
// it counts, so a robot that ended up touching an obstacle can still drive away.
func (w *world) pathBlocked(a, b graph.Point) *Obstacle {
	for i := range w.obstacles {
		o := &w.obstacles[i]
		c := graph.Point{X: o.X, Y: o.Y}
		r := o.R + RobotRadius
		if math.Hypot(a.X-c.X, a.Y-c.Y) < r {
			if (b.X-a.X)*(c.X-a.X)+(b.Y-a.Y)*(c.Y-a.Y) > 0 {
				return o
			}
			continue
		}
		if segmentPointDist(a, b, c) < r {
			return o
		}
	}
	return nil
}

// collides reports whether moving from a to p enters an obstacle (inflated).
func (w *world) collides(a, p graph.Point) *Obstacle {
	for i := range w.obstacles {
		o := &w.obstacles[i]
		r := o.R + RobotRadius
		dNew := math.Hypot(p.X-o.X, p.Y-o.Y)
		if dNew < r && dNew < math.Hypot(a.X-o.X, a.Y-o.Y) {
			return o
		}
	}
	return nil
}

// AddObstacle puts a circular obstacle into the simulated world.
func (f *Fleet) AddObstacle(o Obstacle) error {
	if err := validName(o.ID); err != nil {
		return withField(err, "id")
	}
	if err := graph.ValidateCoordinate("x", o.X); err != nil {
		return err
	}
	if err := graph.ValidateCoordinate("y", o.Y); err != nil {
		return err
	}
	if !(o.R > 0 && o.R <= 100) {
		return graph.FieldErrorf(graph.EINVALID, "r", "obstacle radius %g: want 0 < r ≤ 100 (m)", o.R)
	}
	w := f.world
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, x := range w.obstacles {
		if x.ID == o.ID {
			return graph.Errorf(graph.ECONFLICT, "obstacle %s already exists", o.ID)
		}
	}
	w.obstacles = append(w.obstacles, o)
	return nil
}

// AddObject puts an object into the simulated world.
func (f *Fleet) AddObject(o Object) error {
	if err := validName(o.ID); err != nil {
		return withField(err, "id")
	}
	if err := graph.ValidateCoordinate("x", o.X); err != nil {
		return err
	}
	if err := graph.ValidateCoordinate("y", o.Y); err != nil {
		return err
	}
	if err := graph.ValidateText("kind", o.Kind, 1, 64); err != nil {
		return err
	}
	w := f.world
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.object(o.ID) != nil {
		return graph.Errorf(graph.ECONFLICT, "object %s already exists", o.ID)
	}
	o.HeldBy = ""
	w.objects = append(w.objects, &o)
	return nil
}

// Objects lists the world's objects where they are now.
func (f *Fleet) Objects() []Object {
	w := f.world
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Object, len(w.objects))
	for i, o := range w.objects {
		out[i] = *o
	}
	return out
}

// Obstacles lists the world's obstacles.
func (f *Fleet) Obstacles() []Obstacle {
	w := f.world
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Obstacle(nil), w.obstacles...)
}
