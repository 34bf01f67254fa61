package remote

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/devgraph/devgraph/graph"
)

// Options configure NewHandler.
type Options struct {
	// Logger receives internal errors, which callers only see as the generic message.
	// Nil discards them.
	Logger *slog.Logger
	// DB and Version are reported by GET /rpc/ping.
	DB      string
	Version string
	// ReadOnly refuses every method that changes the graph or moves a robot (EINVALID).
	ReadOnly bool
}

// readMethods are the methods a read-only server still answers.
var readMethods = map[string]bool{
	"ResolveID": true, "FindIdentityByID": true, "FindIdentities": true, "FindHintHolders": true,
	"FindTags": true, "FindTagged": true, "FindNotes": true, "FindNoteByID": true, "FindDeviceByID": true, "FindDevices": true,
	"FindRobotRecords": true, "FindEvents": true, "VerifyChangelog": true, "Stats": true,
	"Backup": true, "Export": true, "Devices": true, "Device": true, "Unbound": true, "Match": true,
	"Sources": true, "Robots": true, "Robot": true, "RobotDetect": true,
}

// writeNames say in a user's words what each changing method does, for the read-only
// refusal (the method names are internal).
var writeNames = map[string]string{
	"CreateIdentity": "creating an identity", "RenameIdentity": "renaming an identity",
	"UpdateIdentity": "updating an identity", "DeleteIdentity": "deleting an identity",
	"MergeIdentities": "merging identities", "RestoreIdentity": "restoring an identity",
	"AddHints": "adding hints", "RemoveHints": "removing hints",
	"UpdateTags": "tagging", "AddNote": "adding a note", "DeleteNote": "deleting a note",
	"ObserveDevices": "recording devices", "BindDevice": "binding a device", "UnbindDevice": "unbinding a device",
	"Bind": "binding a device", "Unbind": "unbinding a device",
	"SaveRobot": "saving a robot", "PruneChangelog": "pruning the changelog", "Import": "importing",
	"RobotNavigate": "driving a robot", "RobotStop": "stopping a robot", "RobotArm": "arming a robot",
	"RobotDisarm": "disarming a robot", "RobotGrasp": "grasping with a robot", "RobotRelease": "releasing a robot's gripper",
	"RobotSetParameters": "changing a robot's parameters",
}

func writeWords(method string) string {
	if w, ok := writeNames[method]; ok {
		return w
	}
	return "changing the graph"
}

// maxArgs bounds a request's JSON arguments (imports stream and are not bounded).
const maxArgs = 8 << 20

type handler struct {
	svc    graph.Service
	opts   Options
	routes map[string]http.HandlerFunc
}

// NewHandler returns an http.Handler answering every graph.Service method under /rpc/
// (see the package comment for the wire format). Serve it only on a listener from
// Listen, which admits same-user peers alone, with ConnContext as the server's
// ConnContext: a caller naming no actor acts as cli:<its user>, and a named actor must
// be one of the contract's forms (else 400).
func NewHandler(svc graph.Service, opts Options) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h := &handler{svc: svc, opts: opts, routes: map[string]http.HandlerFunc{}}
	h.register()
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, "/rpc/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	if name == "ping" {
		writeJSON(w, http.StatusOK, Ping{PID: os.Getpid(), DB: h.opts.DB, Version: h.opts.Version, ReadOnly: h.opts.ReadOnly})
		return
	}
	fn, ok := h.routes[name]
	if !ok {
		h.writeError(w, graph.Errorf(graph.ENOTFOUND, "unknown method %q; this server may be a different devgraph version", name))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.writeError(w, graph.Errorf(graph.EINVALID, "use POST for /rpc/%s", name))
		return
	}
	if h.opts.ReadOnly && !readMethods[name] {
		h.writeError(w, graph.Errorf(graph.EINVALID, "this server is read-only (--read-only): %s is refused; ask its owner or use a server without --read-only", writeWords(name)))
		return
	}
	ctx, err := CallerContext(r)
	if err != nil {
		h.writeError(w, err)
		return
	}
	fn(w, r.WithContext(ctx))
}

func (h *handler) writeError(w http.ResponseWriter, err error) {
	if graph.ErrorCode(err) == graph.EINTERNAL {
		h.opts.Logger.Error("remote call failed", "err", err)
	}
	writeJSON(w, statusOf(graph.ErrorCode(err)), errorBody{Error: toWire(err)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func decodeArgs(r *http.Request, dst any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxArgs))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil && !errors.Is(err, io.EOF) {
		return graph.Errorf(graph.EINVALID, "malformed arguments: %v", err)
	}
	return nil
}

// unary registers a method taking a JSON argument object and answering one JSON value.
func unary[A any](h *handler, name string, fn func(ctx context.Context, a A) (any, error)) {
	h.routes[name] = func(w http.ResponseWriter, r *http.Request) {
		var a A
		if err := decodeArgs(r, &a); err != nil {
			h.writeError(w, err)
			return
		}
		res, err := fn(r.Context(), a)
		if err != nil {
			h.writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, res)
	}
}

// stream writes NDJSON frames; safe for concurrent use by a progress callback.
type stream struct {
	mu  sync.Mutex
	w   http.ResponseWriter
	rc  *http.ResponseController
	enc *json.Encoder
	h   *handler
}

func newStream(h *handler, w http.ResponseWriter) *stream {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	return &stream{w: w, rc: http.NewResponseController(w), enc: json.NewEncoder(w), h: h}
}

func (s *stream) frame(f frame) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.enc.Encode(f); err != nil {
		return err
	}
	return s.rc.Flush()
}

func (s *stream) progress(v any) {
	b, err := json.Marshal(v)
	if err == nil {
		_ = s.frame(frame{Progress: b})
	}
}

func (s *stream) end(res any, err error) {
	if err != nil {
		if graph.ErrorCode(err) == graph.EINTERNAL {
			s.h.opts.Logger.Error("remote call failed", "err", err)
		}
		_ = s.frame(frame{Error: toWire(err)})
		return
	}
	b, merr := json.Marshal(res)
	if merr != nil {
		_ = s.frame(frame{Error: toWire(merr)})
		return
	}
	_ = s.frame(frame{Result: b})
}

// Write sends bytes as data frames (Backup and Export write into the stream).
func (s *stream) Write(p []byte) (int, error) {
	const chunk = 64 << 10
	for off := 0; off < len(p); off += chunk {
		end := min(off+chunk, len(p))
		if err := s.frame(frame{Data: p[off:end]}); err != nil {
			return off, err
		}
	}
	return len(p), nil
}

func (h *handler) register() {
	s := h.svc
	unary(h, "ResolveID", func(ctx context.Context, a argResolve) (any, error) {
		id, err := s.ResolveID(ctx, a.Text, a.Kinds...)
		return argID{ID: id}, err
	})
	unary(h, "FindIdentityByID", func(ctx context.Context, a argFindIdentity) (any, error) {
		return s.FindIdentityByID(ctx, a.ID, a.With)
	})
	unary(h, "FindIdentities", func(ctx context.Context, f graph.IdentityFilter) (any, error) {
		items, total, next, err := s.FindIdentities(ctx, f)
		return pageIdentities{items, total, next}, err
	})
	unary(h, "CreateIdentity", func(ctx context.Context, c graph.IdentityCreate) (any, error) {
		return s.CreateIdentity(ctx, c)
	})
	unary(h, "RenameIdentity", func(ctx context.Context, a argRename) (any, error) {
		return s.RenameIdentity(ctx, a.ID, a.Name)
	})
	unary(h, "UpdateIdentity", func(ctx context.Context, a argUpdate) (any, error) {
		return s.UpdateIdentity(ctx, a.ID, a.Update)
	})
	unary(h, "DeleteIdentity", func(ctx context.Context, a argID) (any, error) {
		return argNone{}, s.DeleteIdentity(ctx, a.ID)
	})
	unary(h, "MergeIdentities", func(ctx context.Context, a argMerge) (any, error) {
		return s.MergeIdentities(ctx, a.From, a.Into)
	})
	unary(h, "RestoreIdentity", func(ctx context.Context, a argID) (any, error) {
		return s.RestoreIdentity(ctx, a.ID)
	})
	unary(h, "AddHints", func(ctx context.Context, a argHints) (any, error) {
		return s.AddHints(ctx, a.ID, a.Fingerprints, a.Move)
	})
	unary(h, "RemoveHints", func(ctx context.Context, a argHints) (any, error) {
		return s.RemoveHints(ctx, a.ID, a.Fingerprints)
	})
	unary(h, "FindHintHolders", func(ctx context.Context, a argFingerprints) (any, error) {
		m, err := s.FindHintHolders(ctx, a.Fingerprints)
		out := make([]holder, 0, len(m))
		for fp, ids := range m {
			out = append(out, holder{fp, ids})
		}
		return out, err
	})
	unary(h, "UpdateTags", func(ctx context.Context, a argTags) (any, error) {
		return s.UpdateTags(ctx, a.Target, a.Add, a.Remove)
	})
	unary(h, "FindTags", func(ctx context.Context, f graph.TagFilter) (any, error) {
		return s.FindTags(ctx, f)
	})
	unary(h, "FindTagged", func(ctx context.Context, a argTagged) (any, error) {
		items, total, next, err := s.FindTagged(ctx, a.Tag, a.First, a.After)
		return pageIDs{items, total, next}, err
	})
	unary(h, "AddNote", func(ctx context.Context, n graph.NoteCreate) (any, error) {
		return s.AddNote(ctx, n)
	})
	unary(h, "FindNotes", func(ctx context.Context, f graph.NoteFilter) (any, error) {
		items, total, next, err := s.FindNotes(ctx, f)
		return pageNotes{items, total, next}, err
	})
	unary(h, "FindNoteByID", func(ctx context.Context, a argID) (any, error) {
		return s.FindNoteByID(ctx, a.ID)
	})
	unary(h, "DeleteNote", func(ctx context.Context, a argID) (any, error) {
		return argNone{}, s.DeleteNote(ctx, a.ID)
	})
	unary(h, "FindDeviceByID", func(ctx context.Context, a argID) (any, error) {
		return s.FindDeviceByID(ctx, a.ID)
	})
	unary(h, "FindDevices", func(ctx context.Context, f graph.DeviceFilter) (any, error) {
		items, total, next, err := s.FindDevices(ctx, f)
		return pageDevices{items, total, next}, err
	})
	unary(h, "ObserveDevices", func(ctx context.Context, snap graph.Snapshot) (any, error) {
		return s.ObserveDevices(ctx, &snap)
	})
	unary(h, "BindDevice", func(ctx context.Context, r graph.BindRequest) (any, error) {
		return s.BindDevice(ctx, r)
	})
	unary(h, "UnbindDevice", func(ctx context.Context, a argID) (any, error) {
		return s.UnbindDevice(ctx, a.ID)
	})
	unary(h, "FindRobotRecords", func(ctx context.Context, _ argNone) (any, error) {
		return s.FindRobotRecords(ctx)
	})
	unary(h, "SaveRobot", func(ctx context.Context, a argSaveRobot) (any, error) {
		var before, after any
		if len(a.Before) > 0 {
			before = a.Before
		}
		if len(a.After) > 0 {
			after = a.After
		}
		return argNone{}, s.SaveRobot(ctx, a.Record, a.Action, before, after)
	})
	unary(h, "FindEvents", func(ctx context.Context, f graph.EventFilter) (any, error) {
		items, next, err := s.FindEvents(ctx, f)
		return pageEvents{items, next}, err
	})
	unary(h, "VerifyChangelog", func(ctx context.Context, _ argNone) (any, error) {
		return s.VerifyChangelog(ctx)
	})
	unary(h, "PruneChangelog", func(ctx context.Context, a argPrune) (any, error) {
		n, err := s.PruneChangelog(ctx, a.Before)
		return countResult{int64(n)}, err
	})
	unary(h, "Stats", func(ctx context.Context, _ argNone) (any, error) {
		return s.Stats(ctx)
	})
	h.routes["Backup"] = func(w http.ResponseWriter, r *http.Request) {
		st := newStream(h, w)
		n, err := s.Backup(r.Context(), st)
		st.end(countResult{n}, err)
	}
	h.routes["Export"] = func(w http.ResponseWriter, r *http.Request) {
		st := newStream(h, w)
		bw := bufio.NewWriterSize(st, 64<<10)
		err := s.Export(r.Context(), bw)
		if ferr := bw.Flush(); err == nil {
			err = ferr
		}
		st.end(argNone{}, err)
	}
	h.routes["Import"] = func(w http.ResponseWriter, r *http.Request) {
		// The body is read while progress frames go out.
		_ = http.NewResponseController(w).EnableFullDuplex()
		st := newStream(h, w)
		stats, err := s.Import(r.Context(), r.Body, func(n int) { st.progress(importProgress{n}) })
		st.end(stats, err)
	}

	unary(h, "Devices", func(ctx context.Context, f graph.DeviceFilter) (any, error) {
		items, total, next, err := s.Devices(ctx, f)
		return pageDeviceViews{items, total, next}, err
	})
	unary(h, "Device", func(ctx context.Context, a argID) (any, error) {
		return s.Device(ctx, a.ID)
	})
	unary(h, "Unbound", func(ctx context.Context, _ argNone) (any, error) {
		return s.Unbound(ctx)
	})
	unary(h, "Match", func(ctx context.Context, a argFingerprints) (any, error) {
		return s.Match(ctx, a.Fingerprints)
	})
	unary(h, "Bind", func(ctx context.Context, in graph.BindInput) (any, error) {
		return s.Bind(ctx, in)
	})
	unary(h, "Unbind", func(ctx context.Context, a argID) (any, error) {
		return s.Unbind(ctx, a.ID)
	})
	unary(h, "Sources", func(ctx context.Context, _ argNone) (any, error) {
		return s.Sources(ctx)
	})
	unary(h, "Robots", func(ctx context.Context, _ argNone) (any, error) {
		return s.Robots(ctx)
	})
	unary(h, "Robot", func(ctx context.Context, a argRobot) (any, error) {
		return s.Robot(ctx, a.Robot)
	})
	h.routes["RobotNavigate"] = func(w http.ResponseWriter, r *http.Request) {
		var a argNavigate
		if err := decodeArgs(r, &a); err != nil {
			h.writeError(w, err)
			return
		}
		st := newStream(h, w)
		res, err := s.RobotNavigate(r.Context(), a.Robot, a.Goal, func(p graph.NavProgress) { st.progress(p) })
		st.end(res, err)
	}
	robot := func(name string, fn func(context.Context, string) (*graph.RobotState, error)) {
		unary(h, name, func(ctx context.Context, a argRobot) (any, error) { return fn(ctx, a.Robot) })
	}
	robot("RobotStop", s.RobotStop)
	robot("RobotArm", s.RobotArm)
	robot("RobotDisarm", s.RobotDisarm)
	robot("RobotRelease", s.RobotRelease)
	unary(h, "RobotDetect", func(ctx context.Context, a argRobot) (any, error) {
		return s.RobotDetect(ctx, a.Robot)
	})
	unary(h, "RobotGrasp", func(ctx context.Context, a argGrasp) (any, error) {
		return s.RobotGrasp(ctx, a.Robot, a.Object)
	})
	unary(h, "RobotSetParameters", func(ctx context.Context, a argParams) (any, error) {
		return s.RobotSetParameters(ctx, a.Robot, a.Update)
	})
}
