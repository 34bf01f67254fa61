package robot

import (
	"strconv"
	"strings"

	"github.com/devgraph/devgraph/graph"
)

// SimSpec is a simulated robot as the --sim-robot NAME[@x,y] flag gives it.
type SimSpec struct {
	Name string
	X, Y float64
}

// ParseSimSpec parses NAME[@x,y], e.g. "scout" or "carrier@2,-1.5". Names are lowercased
// and must be slugs ([a-z0-9][a-z0-9._-]{0,63}).
func ParseSimSpec(s string) (SimSpec, error) {
	name, at, hasAt := strings.Cut(strings.TrimSpace(s), "@")
	sp := SimSpec{Name: strings.ToLower(strings.TrimSpace(name))}
	if err := validName(sp.Name); err != nil {
		return SimSpec{}, err
	}
	if hasAt {
		xs, ys, ok := strings.Cut(at, ",")
		x, errX := strconv.ParseFloat(strings.TrimSpace(xs), 64)
		y, errY := strconv.ParseFloat(strings.TrimSpace(ys), 64)
		if !ok || errX != nil || errY != nil {
			return SimSpec{}, graph.FieldErrorf(graph.EINVALID, "sim-robot", "--sim-robot %q: want NAME[@x,y] with x and y in metres, e.g. scout@1.5,-2", s)
		}
		if err := graph.ValidateCoordinate("x", x); err != nil {
			return SimSpec{}, err
		}
		if err := graph.ValidateCoordinate("y", y); err != nil {
			return SimSpec{}, err
		}
		sp.X, sp.Y = x, y
	}
	return sp, nil
}

func validName(name string) error {
	if graph.ValidateSlug(name) != nil {
		return graph.FieldErrorf(graph.EINVALID, "name", "robot name %q: want 1-64 chars of a-z 0-9 . _ - starting with a letter or digit, e.g. scout", name)
	}
	return nil
}

// AddSim adds a simulated robot at (x, y), heading 0, disarmed, battery full. A pose,
// parameters and battery persisted from an earlier run win over x, y and the defaults.
func (f *Fleet) AddSim(name string, x, y float64) error {
	return f.AddSimRobot(SimConfig{Name: name, X: x, Y: y})
}

// AddSimSpec adds a simulated robot from a --sim-robot NAME[@x,y] spec.
func (f *Fleet) AddSimSpec(spec string) error {
	sp, err := ParseSimSpec(spec)
	if err != nil {
		return err
	}
	return f.AddSim(sp.Name, sp.X, sp.Y)
}

// SimConfig is a simulated robot in full.
type SimConfig struct {
	Name       string
	X, Y       float64
	Heading    float64 // radians
	Battery    float64 // %; 0 means full
	Params     *graph.RobotParams
	NoGeofence bool // ignore the fleet's default geofence
}

// AddSimRobot adds a simulated robot described by c.
func (f *Fleet) AddSimRobot(c SimConfig) error {
	c.Name = strings.ToLower(strings.TrimSpace(c.Name))
	if err := validName(c.Name); err != nil {
		return err
	}
	for _, v := range []struct {
		f string
		v float64
	}{{"x", c.X}, {"y", c.Y}, {"heading", c.Heading}} {
		if err := graph.ValidateCoordinate(v.f, v.v); err != nil {
			return err
		}
	}
	if c.Battery < 0 || c.Battery > 100 {
		return graph.FieldErrorf(graph.EINVALID, "battery", "battery=%g is out of range; want 0..100 (%%)", c.Battery)
	}
	if c.Battery == 0 {
		c.Battery = 100
	}
	params := DefaultParams()
	if f.opts.Params != nil {
		params = *f.opts.Params
	}
	if c.Params != nil {
		if err := validParams(*c.Params); err != nil {
			return err
		}
		params = *c.Params
	}
	if f.opts.Geofence != nil && !c.NoGeofence && (c.Params == nil || c.Params.Geofence == nil) {
		params.Geofence = f.opts.Geofence
	}
	pos := graph.Point{X: c.X, Y: c.Y}
	if params.Geofence != nil && !pointInPolygon(pos, params.Geofence) {
		return graph.FieldErrorf(graph.EINVALID, "x", "robot %s at (%g, %g) would start outside its geofence %s", c.Name, c.X, c.Y, describeFence(params.Geofence))
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return graph.Errorf(graph.EUNAVAILABLE, "the robot fleet is closed")
	}
	if _, ok := f.members[c.Name]; ok {
		return graph.Errorf(graph.ECONFLICT, "a robot named %s already exists; choose another name", c.Name)
	}
	serial := SimSerial(c.Name)
	r := &simRobot{
		w: f.world, name: c.Name, ref: "robot:" + c.Name, serial: serial,
		pose:    graph.Pose{X: c.X, Y: c.Y, Heading: wrapAngle(c.Heading)},
		battery: c.Battery, state: graph.RobotIdle, params: params,
	}
	m := &member{name: c.Name, ref: r.ref, serial: serial, b: r, sim: r}
	r.member = m
	if rec := f.records[serial]; rec != nil {
		if err := r.restore(rec); err != nil {
			f.log.Warn("robot: ignoring stored record", "robot", r.ref, "err", err)
		}
	}
	f.world.mu.Lock()
	f.world.robots = append(f.world.robots, r)
	f.world.mu.Unlock()
	f.members[c.Name] = m
	if f.running && f.records[serial] == nil {
		f.saves.Add(1)
		go func() {
			defer f.saves.Done()
			f.saveQuiet(m, "")
		}()
	}
	return nil
}
