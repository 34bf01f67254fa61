package remote

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/devgraph/devgraph/graph"
)

// alwaysAllowed names the writes a read-only server still runs: stopping a robot is
// always allowed (DESIGN.md).
var alwaysAllowed = map[string]bool{"RobotStop": true}

// method is one row of the table of what the socket serves.
type method struct {
	name string
	// write says in a user's words what the method changes, for a read-only server's
	// refusal (the method names are internal); "" marks a read, which a read-only server
	// still answers.
	write string
	serve func(h *handler) http.HandlerFunc
}

// methods is the one table of the socket's methods: every graph.Service method, its
// read/write class and its server side. Client (client.go) has one method per row, each
// calling its row by name. TestMethodTable checks that graph.Service, this table and
// Client name the same methods, so adding a method to graph.Service is one row here and
// one Client method, and forgetting either fails the build or that test. Plumbing that is
// not in graph.Service (how discovery records devices, how the fleet saves robots) has no
// row and cannot be reached through the socket.
var methods = []method{
	// graph.Resolver
	{"ResolveID", "", unary(func(ctx context.Context, s graph.Service, a argResolve) (any, error) {
		id, err := s.ResolveID(ctx, a.Text, a.Kinds...)
		return argID{ID: id}, err
	})},

	// graph.IdentityService
	{"FindIdentityByID", "", unary(func(ctx context.Context, s graph.Service, a argFindIdentity) (any, error) {
		return s.FindIdentityByID(ctx, a.ID, a.With)
	})},
	{"FindIdentities", "", unary(func(ctx context.Context, s graph.Service, f graph.IdentityFilter) (any, error) {
		items, total, next, err := s.FindIdentities(ctx, f)
		return pageIdentities{items, total, next}, err
	})},
	{"CreateIdentity", "creating an identity", unary(func(ctx context.Context, s graph.Service, c graph.IdentityCreate) (any, error) {
		return s.CreateIdentity(ctx, c)
	})},
	{"RenameIdentity", "renaming an identity", unary(func(ctx context.Context, s graph.Service, a argRename) (any, error) {
		return s.RenameIdentity(ctx, a.ID, a.Name)
	})},
	{"UpdateIdentity", "updating an identity", unary(func(ctx context.Context, s graph.Service, a argUpdate) (any, error) {
		return s.UpdateIdentity(ctx, a.ID, a.Update)
	})},
	{"DeleteIdentity", "deleting an identity", unary(func(ctx context.Context, s graph.Service, a argID) (any, error) {
		return argNone{}, s.DeleteIdentity(ctx, a.ID)
	})},
	{"MergeIdentities", "merging identities", unary(func(ctx context.Context, s graph.Service, a argMerge) (any, error) {
		return s.MergeIdentities(ctx, a.From, a.Into)
	})},
	{"RestoreIdentity", "restoring an identity", unary(func(ctx context.Context, s graph.Service, a argID) (any, error) {
		return s.RestoreIdentity(ctx, a.ID)
	})},

	// graph.HintService
	{"AddHints", "adding hints", unary(func(ctx context.Context, s graph.Service, a argHints) (any, error) {
		return s.AddHints(ctx, a.ID, a.Fingerprints, a.Move)
	})},
	{"RemoveHints", "removing hints", unary(func(ctx context.Context, s graph.Service, a argHints) (any, error) {
		return s.RemoveHints(ctx, a.ID, a.Fingerprints)
	})},
	{"FindHintHolders", "", unary(func(ctx context.Context, s graph.Service, a argFingerprints) (any, error) {
		m, err := s.FindHintHolders(ctx, a.Fingerprints)
		out := make([]holder, 0, len(m))
		for fp, ids := range m {
			out = append(out, holder{fp, ids})
		}
		return out, err
	})},

	// graph.TagService
	{"UpdateTags", "tagging", unary(func(ctx context.Context, s graph.Service, a argTags) (any, error) {
		return s.UpdateTags(ctx, a.Target, a.Add, a.Remove)
	})},
	{"FindTags", "", unary(func(ctx context.Context, s graph.Service, f graph.TagFilter) (any, error) {
		return s.FindTags(ctx, f)
	})},
	{"FindTagged", "", unary(func(ctx context.Context, s graph.Service, a argTagged) (any, error) {
		items, total, next, err := s.FindTagged(ctx, a.Tag, a.First, a.After)
		return pageIDs{items, total, next}, err
	})},

	// graph.NoteService
	{"AddNote", "adding a note", unary(func(ctx context.Context, s graph.Service, n graph.NoteCreate) (any, error) {
		return s.AddNote(ctx, n)
	})},
	{"FindNoteByID", "", unary(func(ctx context.Context, s graph.Service, a argID) (any, error) {
		return s.FindNoteByID(ctx, a.ID)
	})},
	{"FindNotes", "", unary(func(ctx context.Context, s graph.Service, f graph.NoteFilter) (any, error) {
		items, total, next, err := s.FindNotes(ctx, f)
		return pageNotes{items, total, next}, err
	})},
	{"DeleteNote", "deleting a note", unary(func(ctx context.Context, s graph.Service, a argID) (any, error) {
		return argNone{}, s.DeleteNote(ctx, a.ID)
	})},

	// graph.DeviceService
	{"Devices", "", unary(func(ctx context.Context, s graph.Service, f graph.DeviceFilter) (any, error) {
		items, total, next, err := s.Devices(ctx, f)
		return pageDeviceViews{items, total, next}, err
	})},
	{"Device", "", unary(func(ctx context.Context, s graph.Service, a argID) (any, error) {
		return s.Device(ctx, a.ID)
	})},
	{"Unbound", "", unary(func(ctx context.Context, s graph.Service, _ argNone) (any, error) {
		return s.Unbound(ctx)
	})},
	{"Match", "", unary(func(ctx context.Context, s graph.Service, a argFingerprints) (any, error) {
		return s.Match(ctx, a.Fingerprints)
	})},
	{"Bind", "binding a device", unary(func(ctx context.Context, s graph.Service, in graph.BindInput) (any, error) {
		return s.Bind(ctx, in)
	})},
	{"Unbind", "unbinding a device", unary(func(ctx context.Context, s graph.Service, a argID) (any, error) {
		return s.Unbind(ctx, a.ID)
	})},
	{"Sources", "", unary(func(ctx context.Context, s graph.Service, _ argNone) (any, error) {
		return s.Sources(ctx)
	})},

	// graph.RobotService
	{"Robots", "", unary(func(ctx context.Context, s graph.Service, _ argNone) (any, error) {
		return s.Robots(ctx)
	})},
	{"Robot", "", unary(func(ctx context.Context, s graph.Service, a argRobot) (any, error) {
		return s.Robot(ctx, a.Robot)
	})},
	{"RobotNavigate", "driving a robot", func(h *handler) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var a argNavigate
			if err := decodeArgs(r, &a); err != nil {
				h.writeError(w, err)
				return
			}
			st := newStream(h, w)
			res, err := h.svc.RobotNavigate(r.Context(), a.Robot, a.Goal, func(p graph.NavProgress) { st.progress(p) })
			st.end(res, err)
		}
	}},
	{"RobotStop", "stopping a robot", robotCommand(graph.Service.RobotStop)},
	{"RobotArm", "arming a robot", robotCommand(graph.Service.RobotArm)},
	{"RobotDisarm", "disarming a robot", robotCommand(graph.Service.RobotDisarm)},
	{"RobotDetect", "", unary(func(ctx context.Context, s graph.Service, a argRobot) (any, error) {
		return s.RobotDetect(ctx, a.Robot)
	})},
	{"RobotGrasp", "grasping with a robot", unary(func(ctx context.Context, s graph.Service, a argGrasp) (any, error) {
		return s.RobotGrasp(ctx, a.Robot, a.Object)
	})},
	{"RobotRelease", "releasing a robot's gripper", robotCommand(graph.Service.RobotRelease)},
	{"RobotSetParameters", "changing a robot's parameters", unary(func(ctx context.Context, s graph.Service, a argParams) (any, error) {
		return s.RobotSetParameters(ctx, a.Robot, a.Update)
	})},

	// graph.RelationService
	{"Relate", "relating two nodes", unary(func(ctx context.Context, s graph.Service, c graph.RelationCreate) (any, error) {
		return s.Relate(ctx, c)
	})},
	{"UpdateRelation", "updating a relation", unary(func(ctx context.Context, s graph.Service, a argRelationUpdate) (any, error) {
		return s.UpdateRelation(ctx, a.ID, a.Update)
	})},
	{"Unrelate", "removing a relation", unary(func(ctx context.Context, s graph.Service, r graph.RelationRemove) (any, error) {
		return s.Unrelate(ctx, r)
	})},
	{"FindRelationByID", "", unary(func(ctx context.Context, s graph.Service, a argID) (any, error) {
		return s.FindRelationByID(ctx, a.ID)
	})},
	{"FindRelations", "", unary(func(ctx context.Context, s graph.Service, f graph.RelationFilter) (any, error) {
		items, total, next, err := s.FindRelations(ctx, f)
		return pageRelations{items, total, next}, err
	})},
	{"RelationTypes", "", unary(func(ctx context.Context, s graph.Service, _ argNone) (any, error) {
		return s.RelationTypes(ctx)
	})},

	// graph.ClientService
	{"Clients", "", unary(func(ctx context.Context, s graph.Service, _ argNone) (any, error) {
		return s.Clients(ctx)
	})},
	{"Client", "", unary(func(ctx context.Context, s graph.Service, a argID) (any, error) {
		return s.Client(ctx, a.ID)
	})},

	// graph.TraversalService
	{"Neighbors", "", unary(func(ctx context.Context, s graph.Service, a argNeighbors) (any, error) {
		return s.Neighbors(ctx, a.Node, a.Options)
	})},
	{"Path", "", unary(func(ctx context.Context, s graph.Service, a argPath) (any, error) {
		return s.Path(ctx, a.From, a.To, a.Options)
	})},
	{"Trace", "", unary(func(ctx context.Context, s graph.Service, a argTrace) (any, error) {
		return s.Trace(ctx, a.From, a.Options)
	})},
	{"Subgraph", "", unary(func(ctx context.Context, s graph.Service, a argNeighbors) (any, error) {
		return s.Subgraph(ctx, a.Node, a.Options)
	})},

	// graph.ChangelogService
	{"FindEvents", "", unary(func(ctx context.Context, s graph.Service, f graph.EventFilter) (any, error) {
		items, next, err := s.FindEvents(ctx, f)
		return pageEvents{items, next}, err
	})},
	{"VerifyChangelog", "", unary(func(ctx context.Context, s graph.Service, _ argNone) (any, error) {
		return s.VerifyChangelog(ctx)
	})},
	{"PruneChangelog", "pruning the changelog", unary(func(ctx context.Context, s graph.Service, a argPrune) (any, error) {
		n, err := s.PruneChangelog(ctx, a.Before)
		return countResult{int64(n)}, err
	})},

	// graph.DatabaseService
	{"Stats", "", unary(func(ctx context.Context, s graph.Service, _ argNone) (any, error) {
		return s.Stats(ctx)
	})},
	{"CheckRelations", "", unary(func(ctx context.Context, s graph.Service, _ argNone) (any, error) {
		p, err := s.CheckRelations(ctx)
		return problemsResult{p}, err
	})},
	{"CheckConsistency", "", unary(func(ctx context.Context, s graph.Service, _ argNone) (any, error) {
		return argNone{}, s.CheckConsistency(ctx)
	})},
	{"Backup", "", func(h *handler) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			st := newStream(h, w)
			n, err := h.svc.Backup(r.Context(), st)
			st.end(countResult{n}, err)
		}
	}},
	{"Export", "", func(h *handler) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			st := newStream(h, w)
			bw := bufio.NewWriterSize(st, 64<<10)
			err := h.svc.Export(r.Context(), bw)
			if ferr := bw.Flush(); err == nil {
				err = ferr
			}
			st.end(argNone{}, err)
		}
	}},
	{"Import", "importing", func(h *handler) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			// The body is read while progress frames go out.
			_ = http.NewResponseController(w).EnableFullDuplex()
			ctx := r.Context()
			if v := r.URL.Query().Get("max_size"); v != "" {
				// The caller's import --max-size: the store spools the body under it.
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil || n <= 0 {
					h.writeError(w, graph.FieldErrorf(graph.EINVALID, "max_size", "max_size %q is not a positive byte count", v))
					return
				}
				ctx = graph.WithImportMaxSize(ctx, n)
			}
			st := newStream(h, w)
			stats, err := h.svc.Import(ctx, r.Body, func(n int) { st.progress(importProgress{n}) })
			st.end(stats, err)
			if err != nil {
				// A refusal comes before the stream ends (a line too long, past
				// --max-size): read on, for a while, so the client reads the answer
				// and stops sending, instead of its write failing on a closed
				// connection first ("broken pipe" in place of the reason).
				_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(5 * time.Second))
				_, _ = io.Copy(io.Discard, r.Body)
			}
		}
	}},
}

// methodByName indexes the table.
var methodByName = func() map[string]*method {
	m := make(map[string]*method, len(methods))
	for i := range methods {
		m[methods[i].name] = &methods[i]
	}
	return m
}()

// unary serves a method taking a JSON argument object and answering one JSON value.
func unary[A any](fn func(ctx context.Context, s graph.Service, a A) (any, error)) func(h *handler) http.HandlerFunc {
	return func(h *handler) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var a A
			if err := decodeArgs(r, &a); err != nil {
				h.writeError(w, err)
				return
			}
			res, err := fn(r.Context(), h.svc, a)
			if err != nil {
				h.writeError(w, err)
				return
			}
			writeJSON(w, http.StatusOK, res)
		}
	}
}

// robotCommand serves a robot method taking only the robot's name.
func robotCommand(fn func(graph.Service, context.Context, string) (*graph.RobotState, error)) func(h *handler) http.HandlerFunc {
	return unary(func(ctx context.Context, s graph.Service, a argRobot) (any, error) { return fn(s, ctx, a.Robot) })
}
