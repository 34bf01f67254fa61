package identity

import (
	"context"
	"strings"

	"github.com/devgraph/devgraph/graph"
)

const robotPrefix = "robot:"

// isRobotRef reports whether ref names a robot, qualified with its host (a fleet's
// "studio-a/robot:scout") or not.
func isRobotRef(ref string) bool {
	_, local := graph.SplitHost(ref)
	return strings.HasPrefix(local, robotPrefix)
}

func (s *Service) fleet() (graph.Fleet, error) {
	if s.Fleet == nil {
		return nil, graph.Errorf(graph.EUNAVAILABLE, "no robots in this process (robots live in the serving process)").Next(graph.Step{Do: graph.StepServe})
	}
	return s.Fleet, nil
}

// resolveRobot turns a robot named by identity id, device id or ref (or a bare robot name)
// into the fleet's ref, and the identity it is, when known.
func (s *Service) resolveRobot(ctx context.Context, name string) (ref, identity string, err error) {
	f, err := s.fleet()
	if err != nil {
		return "", "", err
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return "", "", graph.FieldErrorf(graph.EINVALID, "robot", "no robot named; give a robot ref such as robot:scout, or its identity")
	}
	if strings.HasPrefix(name, robotPrefix) {
		return name, "", nil
	}
	if _, err := s.sync(ctx); err != nil {
		return "", "", err
	}
	full, rerr := s.store.ResolveID(ctx, name, graph.KindIdentity, graph.KindDevice)
	switch {
	case rerr == nil && graph.KindOf(full) == graph.KindDevice:
		d, err := s.store.FindDeviceByID(ctx, full)
		if err != nil {
			return "", "", err
		}
		if !isRobotRef(d.Ref) {
			return "", "", graph.FieldErrorf(graph.EINVALID, "robot", "%s (%s) is not a robot", d.ID, d.Ref).Next(graph.ListStep(graph.ListRobots, ""))
		}
		return d.Ref, d.IdentityID, nil
	case rerr == nil:
		ref, err := s.robotOfIdentity(ctx, f, full)
		return ref, full, err
	case graph.ErrorCode(rerr) != graph.ENOTFOUND:
		return "", "", rerr
	}
	// A bare robot name ("scout").
	if _, err := f.Status(ctx, robotPrefix+name); err == nil {
		return robotPrefix + name, "", nil
	}
	return "", "", graph.FieldErrorf(graph.ENOTFOUND, "robot", "unknown robot %q%s; name it by ref, device or identity", name, s.robotList(ctx, f)).Next(graph.ListStep(graph.ListRobots, ""))
}

// robotOfIdentity finds the robot an identity is: a robot device bound to it, else a
// robot whose serial the identity holds as a hint.
func (s *Service) robotOfIdentity(ctx context.Context, f graph.Fleet, id string) (string, error) {
	devs, err := s.allDevices(ctx, graph.DeviceFilter{IdentityID: id, All: true})
	if err != nil {
		return "", err
	}
	for _, d := range devs {
		if isRobotRef(d.Ref) {
			return d.Ref, nil
		}
	}
	robots, err := f.Robots(ctx)
	if err != nil {
		return "", err
	}
	holders, err := s.serialHolders(ctx, robots)
	if err != nil {
		return "", err
	}
	for _, r := range robots {
		if hs := holders[r.Ref]; len(hs) == 1 && hs[0] == id {
			return r.Ref, nil
		}
	}
	ref := "robot:<name>"
	if len(robots) == 1 {
		ref = robots[0].Ref
	}
	return "", graph.FieldErrorf(graph.ENOTFOUND, "robot", "%s is not a robot: no robot device is bound to it; bind one to it%s", id, s.robotList(ctx, f)).Next(
		graph.ListStep(graph.ListRobots, ""), graph.Step{Do: graph.StepBind, Ref: ref, Identity: id})
}

// serialHolders looks each robot's serial up in the hint index: ref → identity ids.
func (s *Service) serialHolders(ctx context.Context, robots []*graph.RobotState) (map[string][]string, error) {
	var fps []graph.Fingerprint
	byRef := map[string]graph.Fingerprint{}
	for _, r := range robots {
		if r == nil || r.Serial == "" {
			continue
		}
		fp := graph.Fingerprint{Kind: graph.FPRobotSerial, Value: r.Serial}
		fps = append(fps, fp)
		byRef[r.Ref] = fp
	}
	out := map[string][]string{}
	if len(fps) == 0 {
		return out, nil
	}
	h, err := s.store.FindHintHolders(ctx, fps)
	if err != nil {
		return nil, err
	}
	for ref, fp := range byRef {
		out[ref] = h[fp]
	}
	return out, nil
}

func (s *Service) robotList(ctx context.Context, f graph.Fleet) string {
	robots, err := f.Robots(ctx)
	if err != nil || len(robots) == 0 {
		return ""
	}
	refs := make([]string, 0, len(robots))
	for _, r := range robots {
		refs = append(refs, r.Ref)
	}
	return "; robots: " + strings.Join(refs, ", ")
}

// annotate fills the identity and device a robot's state belongs to, when the fleet
// does not know them.
func (s *Service) annotate(ctx context.Context, states []*graph.RobotState, identity string) {
	var need []*graph.RobotState
	for _, st := range states {
		if st == nil {
			continue
		}
		if st.Host == "" {
			st.Host = s.Host() // the robots this process drives are attached here
		}
		if st.IdentityID == "" && identity != "" && len(states) == 1 {
			st.IdentityID = identity
		}
		if st.DeviceID == "" || st.IdentityID == "" {
			if d, err := s.store.FindDeviceByID(ctx, st.Ref); err == nil {
				if st.DeviceID == "" {
					st.DeviceID = d.ID
				}
				if st.IdentityID == "" {
					st.IdentityID = d.IdentityID
				}
			}
		}
		if st.IdentityID == "" {
			need = append(need, st)
		}
	}
	if len(need) == 0 {
		return
	}
	holders, err := s.serialHolders(ctx, need)
	if err != nil {
		return
	}
	for _, st := range need {
		if hs := holders[st.Ref]; len(hs) == 1 {
			st.IdentityID = hs[0]
		}
	}
}

func (s *Service) Robots(ctx context.Context) ([]*graph.RobotState, error) {
	f, err := s.fleet()
	if err != nil {
		return nil, err
	}
	if _, err := s.sync(ctx); err != nil {
		return nil, err
	}
	rs, err := f.Robots(ctx)
	if err != nil {
		return nil, err
	}
	s.annotate(ctx, rs, "")
	return rs, nil
}

// checkCommand checks a robot command's inputs before the robot is touched: the change
// message its event will carry (the store would refuse it only after the robot moved).
func checkCommand(ctx context.Context) error {
	return graph.ValidateMessage(graph.MessageFrom(ctx))
}

// robotCommand runs one fleet command on the named robot and annotates its result.
func (s *Service) robotCommand(ctx context.Context, robot string, call func(f graph.Fleet, ref string) (*graph.RobotState, error)) (*graph.RobotState, error) {
	if err := checkCommand(ctx); err != nil {
		return nil, err
	}
	return s.robotState(ctx, robot, call)
}

// safetyCommand runs a command that makes a robot safe (stop, disarm), which is never
// refused: with a change message the changelog cannot take, the robot is made safe all
// the same, the event is recorded without the message, and the caller gets the
// message's error saying so (done: "stopped") beside the robot's state.
func (s *Service) safetyCommand(ctx context.Context, robot, done string, cmd func(graph.Fleet, context.Context, string) (*graph.RobotState, error)) (*graph.RobotState, error) {
	msgErr := checkCommand(ctx)
	if msgErr != nil {
		ctx = graph.WithMessage(ctx, "")
	}
	st, err := s.robotState(ctx, robot, func(f graph.Fleet, ref string) (*graph.RobotState, error) { return cmd(f, ctx, ref) })
	if err != nil || msgErr == nil {
		return st, err
	}
	return st, graph.FieldErrorf(graph.ErrorCode(msgErr), "message", "%s; the robot was %s all the same, and the change recorded without the message",
		graph.ErrorMessage(msgErr), done)
}

// robotState runs one fleet call on the named robot and annotates its result.
func (s *Service) robotState(ctx context.Context, robot string, call func(f graph.Fleet, ref string) (*graph.RobotState, error)) (*graph.RobotState, error) {
	ref, id, err := s.resolveRobot(ctx, robot)
	if err != nil {
		return nil, err
	}
	st, err := call(s.Fleet, ref)
	if err != nil {
		return nil, err
	}
	s.annotate(ctx, []*graph.RobotState{st}, id)
	return st, nil
}

func (s *Service) Robot(ctx context.Context, robot string) (*graph.RobotState, error) {
	return s.robotState(ctx, robot, func(f graph.Fleet, ref string) (*graph.RobotState, error) { return f.Status(ctx, ref) })
}

func (s *Service) RobotNavigate(ctx context.Context, robot string, goal graph.Goal, progress func(graph.NavProgress)) (*graph.NavResult, error) {
	if err := checkCommand(ctx); err != nil {
		return nil, err
	}
	if err := graph.ValidateGoal(goal); err != nil {
		return nil, err
	}
	ref, _, err := s.resolveRobot(ctx, robot)
	if err != nil {
		return nil, err
	}
	return s.Fleet.Navigate(ctx, ref, goal, progress)
}

func (s *Service) RobotStop(ctx context.Context, robot string) (*graph.RobotState, error) {
	// Stop goes straight to the fleet when named by ref, so it is answered even while the
	// store is busy.
	return s.safetyCommand(ctx, robot, "stopped", graph.Fleet.Stop)
}

func (s *Service) RobotArm(ctx context.Context, robot string) (*graph.RobotState, error) {
	return s.robotCommand(ctx, robot, func(f graph.Fleet, ref string) (*graph.RobotState, error) { return f.Arm(ctx, ref) })
}

func (s *Service) RobotDisarm(ctx context.Context, robot string) (*graph.RobotState, error) {
	return s.safetyCommand(ctx, robot, "disarmed", graph.Fleet.Disarm)
}

func (s *Service) RobotDetect(ctx context.Context, robot string) ([]graph.DetectedObject, error) {
	ref, _, err := s.resolveRobot(ctx, robot)
	if err != nil {
		return nil, err
	}
	return s.Fleet.Detect(ctx, ref)
}

func (s *Service) RobotGrasp(ctx context.Context, robot, objectID string) (*graph.RobotState, error) {
	return s.robotCommand(ctx, robot, func(f graph.Fleet, ref string) (*graph.RobotState, error) { return f.Grasp(ctx, ref, objectID) })
}

func (s *Service) RobotRelease(ctx context.Context, robot string) (*graph.RobotState, error) {
	return s.robotCommand(ctx, robot, func(f graph.Fleet, ref string) (*graph.RobotState, error) { return f.Release(ctx, ref) })
}

func (s *Service) RobotSetParameters(ctx context.Context, robot string, u graph.RobotParamsUpdate) (*graph.RobotState, error) {
	return s.robotCommand(ctx, robot, func(f graph.Fleet, ref string) (*graph.RobotState, error) { return f.SetParameters(ctx, ref, u) })
}
