package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/devgraph/devgraph/graph"
)

var _ graph.Service = (*Client)(nil)

// Client is a graph.Service answered by the server listening on a unix socket. It is
// safe for concurrent use. Each call sends the context's actor, request id and message
// in its body's caller line, so the server records the caller's events exactly as the caller would.
type Client struct {
	path string
	http *http.Client
}

// NewClient returns a client for the socket at path. It does not dial; use Ping to see
// whether a server answers.
func NewClient(path string) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return DialSocket(ctx, path)
		},
		MaxIdleConns:          8,
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: 0, // navigations and imports take as long as they take
		DisableCompression:    true,
	}
	return &Client{path: path, http: &http.Client{Transport: tr}}
}

// serverUID tells who runs the process at the other end of a socket connection
// (SO_PEERCRED); tests replace it.
var serverUID = peerUID

// DialSocket connects to the unix socket at path and checks that the process serving it
// runs as our own user: in a shared directory another user could have made the socket
// first, and would then see our calls and answer them. A server of another user is
// refused with an EUNAVAILABLE error saying so.
func DialSocket(ctx context.Context, path string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, graph.Errorf(graph.EUNAVAILABLE, "%s is not a unix socket", path)
	}
	uid, err := serverUID(uc)
	if err != nil {
		c.Close()
		return nil, graph.Errorf(graph.EUNAVAILABLE, "cannot tell which user serves %s (%v); refusing to talk to it", path, err)
	}
	if me := os.Getuid(); uid != me {
		c.Close()
		return nil, graph.Errorf(graph.EUNAVAILABLE, "the process listening on %s runs as another user (uid %d, not %d); refusing to talk to it. Remove that socket, or keep the database in a directory only you can write", path, uid, me)
	}
	return c, nil
}

// Dial returns a client for the socket at path once a server answers its ping within
// timeout, or an EUNAVAILABLE error.
func Dial(ctx context.Context, path string, timeout time.Duration) (*Client, *Ping, error) {
	c := NewClient(path)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p, err := c.Ping(ctx)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, p, nil
}

// SocketPath returns the socket path.
func (c *Client) SocketPath() string { return c.path }

// Close releases idle connections. Safe to call twice.
func (c *Client) Close() error {
	c.http.CloseIdleConnections()
	return nil
}

// Ping asks who is serving.
func (c *Client) Ping(ctx context.Context) (*Ping, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://devgraph/rpc/ping", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.unavailable(err)
	}
	defer resp.Body.Close()
	var p Ping
	if resp.StatusCode != http.StatusOK {
		return nil, graph.Errorf(graph.EUNAVAILABLE, "the process on %s is not a devgraph server (status %d)", c.path, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		return nil, graph.Errorf(graph.EUNAVAILABLE, "the process on %s is not a devgraph server: %v", c.path, err)
	}
	return &p, nil
}

func (c *Client) unavailable(err error) error {
	var ge *graph.Error
	if errors.As(err, &ge) {
		return ge
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return graph.Errorf(graph.EUNAVAILABLE, "the devgraph server on %s did not answer in time", c.path)
	}
	if serverLost(err) {
		return graph.Errorf(graph.EUNAVAILABLE, "the devgraph server on %s stopped while answering (%v): it was stopped or crashed; start it again (devgraph serve), and see in devgraph changelog whether the change was made", c.path, rootCause(err))
	}
	return graph.Errorf(graph.EUNAVAILABLE, "the devgraph server on %s is not answering (%v)", c.path, rootCause(err))
}

func rootCause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

// Post sends body to another endpoint the server offers on the socket (such as
// /graphql), after the caller line carrying the context's actor, request id and
// message, and returns the response whatever its status. The caller closes its body.
func (c *Client) Post(ctx context.Context, path, contentType string, body io.Reader) (*http.Response, error) {
	body, err := withCaller(ctx, body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://localhost"+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, c.unavailable(err)
	}
	return resp, nil
}

// withCaller puts the caller line (Caller) before body: the context's actor, request id
// and message travel in the body, where a message of any lines and length fits.
func withCaller(ctx context.Context, body io.Reader) (io.Reader, error) {
	var cl Caller
	if a := graph.ActorFrom(ctx); a != "unknown" {
		cl.Actor = a
	}
	cl.RequestID = graph.RequestIDFrom(ctx)
	cl.Message = graph.MessageFrom(ctx)
	line, err := callerLine(cl)
	if err != nil {
		return nil, err
	}
	// A body in memory stays one: the request then has a length, not chunks (a chunked
	// body costs the server a second read and the call ~60% more on a small request).
	if br, ok := body.(*bytes.Reader); ok {
		b := make([]byte, len(line), len(line)+br.Len())
		copy(b, line)
		rest, err := io.ReadAll(br)
		if err != nil {
			return nil, err
		}
		return bytes.NewReader(append(b, rest...)), nil
	}
	return io.MultiReader(bytes.NewReader(line), body), nil
}

// do sends one call and returns the response (status 200) or the call's error.
func (c *Client) do(ctx context.Context, method string, body io.Reader) (*http.Response, error) {
	return c.post(ctx, "/rpc/"+method, method, body)
}

// post sends body, after the caller line, to the socket's path; method names the call in
// errors.
func (c *Client) post(ctx context.Context, path, method string, body io.Reader) (*http.Response, error) {
	body, err := withCaller(ctx, body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://devgraph"+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, c.unavailable(err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		var eb errorBody
		if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&eb); err != nil || eb.Error == nil {
			return nil, graph.Errorf(graph.EUNAVAILABLE, "the devgraph server on %s answered %s to %s", c.path, resp.Status, method)
		}
		return nil, eb.Error.toGraph()
	}
	return resp, nil
}

// call sends args and decodes the JSON result into out. Text json.Marshal would
// silently replace (invalid UTF-8) is refused before anything is sent.
func (c *Client) call(ctx context.Context, method string, args, out any) error {
	b, err := encodeArgs(args)
	if graph.ErrorCode(err) == graph.EINVALID {
		return err
	}
	if err != nil {
		return fmt.Errorf("encode %s arguments: %w", method, err)
	}
	resp, err := c.do(ctx, method, bytes.NewReader(b))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return c.unavailable(fmt.Errorf("decode %s result: %w", method, err))
	}
	return nil
}

// encodeArgs is json.Marshal refusing, with the field named, text it would replace.
func encodeArgs(args any) ([]byte, error) {
	if err := graph.CheckValueText(args); err != nil {
		return nil, err
	}
	return json.Marshal(args)
}

// stream reads NDJSON frames: data goes to w, progress to onProgress, and the result
// frame is decoded into out.
func (c *Client) stream(ctx context.Context, method string, body io.Reader, w io.Writer, onProgress func(json.RawMessage), out any) error {
	resp, err := c.do(ctx, method, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 256<<10), 16<<20)
	for sc.Scan() {
		var f frame
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			return c.unavailable(fmt.Errorf("decode %s frame: %w", method, err))
		}
		switch {
		case f.Error != nil:
			return f.Error.toGraph()
		case f.Result != nil:
			if out != nil {
				if err := json.Unmarshal(f.Result, out); err != nil {
					return c.unavailable(fmt.Errorf("decode %s result: %w", method, err))
				}
			}
			return nil
		case f.Progress != nil:
			if onProgress != nil {
				onProgress(f.Progress)
			}
		case f.Data != nil:
			if w != nil {
				if _, err := w.Write(f.Data); err != nil {
					return fmt.Errorf("%s: write: %w", method, err)
				}
			}
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := sc.Err(); err != nil {
		return c.unavailable(err)
	}
	return graph.Errorf(graph.EUNAVAILABLE, "the devgraph server on %s ended %s before answering", c.path, method)
}

func (c *Client) ResolveID(ctx context.Context, text string, kinds ...graph.Kind) (string, error) {
	var out argID
	err := c.call(ctx, "ResolveID", argResolve{text, kinds}, &out)
	return out.ID, err
}

func (c *Client) FindIdentityByID(ctx context.Context, id string, with graph.IdentityParts) (*graph.Identity, error) {
	var out *graph.Identity
	err := c.call(ctx, "FindIdentityByID", argFindIdentity{id, with}, &out)
	return out, err
}

func (c *Client) FindIdentities(ctx context.Context, f graph.IdentityFilter) ([]*graph.Identity, int, string, error) {
	var out pageIdentities
	err := c.call(ctx, "FindIdentities", f, &out)
	return out.Items, out.Total, out.Next, err
}

func (c *Client) CreateIdentity(ctx context.Context, in graph.IdentityCreate) (*graph.Identity, error) {
	var out *graph.Identity
	err := c.call(ctx, "CreateIdentity", in, &out)
	return out, err
}

func (c *Client) RenameIdentity(ctx context.Context, id, name string) (*graph.Identity, error) {
	var out *graph.Identity
	err := c.call(ctx, "RenameIdentity", argRename{id, name}, &out)
	return out, err
}

func (c *Client) UpdateIdentity(ctx context.Context, id string, u graph.IdentityUpdate) (*graph.Identity, error) {
	var out *graph.Identity
	err := c.call(ctx, "UpdateIdentity", argUpdate{id, u}, &out)
	return out, err
}

func (c *Client) DeleteIdentity(ctx context.Context, id string) error {
	return c.call(ctx, "DeleteIdentity", argID{id}, nil)
}

func (c *Client) MergeIdentities(ctx context.Context, from, into string) (*graph.Identity, error) {
	var out *graph.Identity
	err := c.call(ctx, "MergeIdentities", argMerge{from, into}, &out)
	return out, err
}

func (c *Client) RestoreIdentity(ctx context.Context, id string) (*graph.Identity, error) {
	var out *graph.Identity
	err := c.call(ctx, "RestoreIdentity", argID{id}, &out)
	return out, err
}

func (c *Client) AddHints(ctx context.Context, id string, fps []graph.Fingerprint, move bool) (*graph.Identity, error) {
	var out *graph.Identity
	err := c.call(ctx, "AddHints", argHints{id, fps, move}, &out)
	return out, err
}

func (c *Client) RemoveHints(ctx context.Context, id string, fps []graph.Fingerprint) (*graph.Identity, error) {
	var out *graph.Identity
	err := c.call(ctx, "RemoveHints", argHints{ID: id, Fingerprints: fps}, &out)
	return out, err
}

func (c *Client) FindHintHolders(ctx context.Context, fps []graph.Fingerprint) (map[graph.Fingerprint][]string, error) {
	var out []holder
	if err := c.call(ctx, "FindHintHolders", argFingerprints{fps}, &out); err != nil {
		return nil, err
	}
	m := make(map[graph.Fingerprint][]string, len(out))
	for _, h := range out {
		m[h.Fingerprint] = h.Holders
	}
	return m, nil
}

func (c *Client) UpdateTags(ctx context.Context, target string, add, remove []string) ([]string, error) {
	var out []string
	err := c.call(ctx, "UpdateTags", argTags{target, add, remove}, &out)
	return out, err
}

func (c *Client) FindTags(ctx context.Context, f graph.TagFilter) ([]graph.TagCount, error) {
	var out []graph.TagCount
	err := c.call(ctx, "FindTags", f, &out)
	return out, err
}

func (c *Client) FindTagged(ctx context.Context, tag string, first int, after string) ([]string, int, string, error) {
	var out pageIDs
	err := c.call(ctx, "FindTagged", argTagged{tag, first, after}, &out)
	return out.Items, out.Total, out.Next, err
}

func (c *Client) AddNote(ctx context.Context, n graph.NoteCreate) (*graph.Note, error) {
	var out *graph.Note
	err := c.call(ctx, "AddNote", n, &out)
	return out, err
}

func (c *Client) FindNotes(ctx context.Context, f graph.NoteFilter) ([]*graph.Note, int, string, error) {
	var out pageNotes
	err := c.call(ctx, "FindNotes", f, &out)
	return out.Items, out.Total, out.Next, err
}

func (c *Client) FindNoteByID(ctx context.Context, id string) (*graph.Note, error) {
	var out *graph.Note
	err := c.call(ctx, "FindNoteByID", argID{id}, &out)
	return out, err
}

func (c *Client) DeleteNote(ctx context.Context, id string) error {
	return c.call(ctx, "DeleteNote", argID{id}, nil)
}

func (c *Client) FindEvents(ctx context.Context, f graph.EventFilter) ([]*graph.Event, string, error) {
	var out pageEvents
	err := c.call(ctx, "FindEvents", f, &out)
	return out.Items, out.Next, err
}

func (c *Client) VerifyChangelog(ctx context.Context) (*graph.VerifyReport, error) {
	var out *graph.VerifyReport
	err := c.call(ctx, "VerifyChangelog", argNone{}, &out)
	return out, err
}

func (c *Client) PruneChangelog(ctx context.Context, before time.Time) (int, error) {
	var out countResult
	err := c.call(ctx, "PruneChangelog", argPrune{before}, &out)
	return int(out.N), err
}

func (c *Client) Stats(ctx context.Context) (*graph.Stats, error) {
	var out *graph.Stats
	err := c.call(ctx, "Stats", argNone{}, &out)
	return out, err
}

func (c *Client) CheckRelations(ctx context.Context) ([]string, error) {
	var out problemsResult
	err := c.call(ctx, "CheckRelations", argNone{}, &out)
	return out.Problems, err
}

func (c *Client) CheckConsistency(ctx context.Context) error {
	return c.call(ctx, "CheckConsistency", argNone{}, nil)
}

func (c *Client) Backup(ctx context.Context, w io.Writer) (int64, error) {
	var out countResult
	err := c.stream(ctx, "Backup", bytes.NewReader([]byte("{}")), w, nil, &out)
	return out.N, err
}

func (c *Client) Export(ctx context.Context, w io.Writer) error {
	return c.stream(ctx, "Export", bytes.NewReader([]byte("{}")), w, nil, nil)
}

func (c *Client) Import(ctx context.Context, r io.Reader, progress func(done, total int)) (*graph.ImportStats, error) {
	var out *graph.ImportStats
	onProgress := func(b json.RawMessage) {
		var p importProgress
		if progress != nil && json.Unmarshal(b, &p) == nil {
			progress(p.Records, p.Total)
		}
	}
	// The server spools the stream (it cannot seek in it) under the caller's bound.
	method := "Import"
	if n := graph.ImportMaxSizeFrom(ctx); n != graph.DefaultImportMaxSize {
		method += "?max_size=" + strconv.FormatInt(n, 10)
	}
	// Hide r's other methods (WriterTo, Len) so the transport streams it chunked.
	err := c.stream(ctx, method, io.MultiReader(r), nil, onProgress, &out)
	return out, err
}

func (c *Client) Devices(ctx context.Context, f graph.DeviceFilter) ([]*graph.DeviceView, int, string, error) {
	var out pageDeviceViews
	err := c.call(ctx, "Devices", f, &out)
	return out.Items, out.Total, out.Next, err
}

func (c *Client) Device(ctx context.Context, idOrRef string) (*graph.DeviceView, error) {
	var out *graph.DeviceView
	err := c.call(ctx, "Device", argID{idOrRef}, &out)
	return out, err
}

func (c *Client) Unbound(ctx context.Context) ([]*graph.DeviceView, error) {
	var out []*graph.DeviceView
	err := c.call(ctx, "Unbound", argNone{}, &out)
	return out, err
}

func (c *Client) Match(ctx context.Context, fps []graph.Fingerprint) (*graph.Match, error) {
	var out *graph.Match
	err := c.call(ctx, "Match", argFingerprints{fps}, &out)
	return out, err
}

func (c *Client) Bind(ctx context.Context, in graph.BindInput) (*graph.BindResult, error) {
	var out *graph.BindResult
	err := c.call(ctx, "Bind", in, &out)
	return out, err
}

func (c *Client) Unbind(ctx context.Context, ref string) (*graph.Device, error) {
	var out *graph.Device
	err := c.call(ctx, "Unbind", argID{ref}, &out)
	return out, err
}

func (c *Client) Sources(ctx context.Context) ([]graph.SourceStatus, error) {
	var out []graph.SourceStatus
	err := c.call(ctx, "Sources", argNone{}, &out)
	return out, err
}

func (c *Client) Robots(ctx context.Context) ([]*graph.RobotState, error) {
	var out []*graph.RobotState
	err := c.call(ctx, "Robots", argNone{}, &out)
	return out, err
}

func (c *Client) Robot(ctx context.Context, robot string) (*graph.RobotState, error) {
	return c.robot(ctx, "Robot", robot)
}

func (c *Client) robot(ctx context.Context, method, robot string) (*graph.RobotState, error) {
	var out *graph.RobotState
	err := c.call(ctx, method, argRobot{robot}, &out)
	return out, err
}

// RobotNavigate blocks like the server's; cancelling ctx closes the connection, which
// cancels the navigation on the server (and stops the robot).
func (c *Client) RobotNavigate(ctx context.Context, robot string, goal graph.Goal, progress func(graph.NavProgress)) (*graph.NavResult, error) {
	b, err := encodeArgs(argNavigate{robot, goal})
	if graph.ErrorCode(err) == graph.EINVALID {
		return nil, err
	}
	if err != nil {
		return nil, graph.FieldErrorf(graph.EINVALID, "goal", "goal is not a finite number pair: %v", err)
	}
	var out *graph.NavResult
	onProgress := func(m json.RawMessage) {
		var p graph.NavProgress
		if progress != nil && json.Unmarshal(m, &p) == nil {
			progress(p)
		}
	}
	err = c.stream(ctx, "RobotNavigate", bytes.NewReader(b), nil, onProgress, &out)
	return out, err
}

func (c *Client) RobotStop(ctx context.Context, robot string) (*graph.RobotState, error) {
	return c.robot(ctx, "RobotStop", robot)
}

func (c *Client) RobotArm(ctx context.Context, robot string) (*graph.RobotState, error) {
	return c.robot(ctx, "RobotArm", robot)
}

func (c *Client) RobotDisarm(ctx context.Context, robot string) (*graph.RobotState, error) {
	return c.robot(ctx, "RobotDisarm", robot)
}

func (c *Client) RobotDetect(ctx context.Context, robot string) ([]graph.DetectedObject, error) {
	var out []graph.DetectedObject
	err := c.call(ctx, "RobotDetect", argRobot{robot}, &out)
	return out, err
}

func (c *Client) RobotGrasp(ctx context.Context, robot, objectID string) (*graph.RobotState, error) {
	var out *graph.RobotState
	err := c.call(ctx, "RobotGrasp", argGrasp{robot, objectID}, &out)
	return out, err
}

func (c *Client) RobotRelease(ctx context.Context, robot string) (*graph.RobotState, error) {
	return c.robot(ctx, "RobotRelease", robot)
}

func (c *Client) RobotSetParameters(ctx context.Context, robot string, u graph.RobotParamsUpdate) (*graph.RobotState, error) {
	var out *graph.RobotState
	err := c.call(ctx, "RobotSetParameters", argParams{robot, u}, &out)
	return out, err
}

func (c *Client) Relate(ctx context.Context, in graph.RelationCreate) (*graph.RelationChange, error) {
	var out *graph.RelationChange
	err := c.call(ctx, "Relate", in, &out)
	return out, err
}

func (c *Client) UpdateRelation(ctx context.Context, id string, u graph.RelationUpdate) (*graph.RelationChange, error) {
	var out *graph.RelationChange
	err := c.call(ctx, "UpdateRelation", argRelationUpdate{id, u}, &out)
	return out, err
}

func (c *Client) Unrelate(ctx context.Context, r graph.RelationRemove) (*graph.RelationChange, error) {
	var out *graph.RelationChange
	err := c.call(ctx, "Unrelate", r, &out)
	return out, err
}

func (c *Client) FindRelationByID(ctx context.Context, id string) (*graph.Relation, error) {
	var out *graph.Relation
	err := c.call(ctx, "FindRelationByID", argID{id}, &out)
	return out, err
}

func (c *Client) FindRelations(ctx context.Context, f graph.RelationFilter) ([]*graph.Relation, int, string, error) {
	var out pageRelations
	err := c.call(ctx, "FindRelations", f, &out)
	return out.Items, out.Total, out.Next, err
}

func (c *Client) RelationTypes(ctx context.Context) ([]graph.RelationTypeCount, error) {
	var out []graph.RelationTypeCount
	err := c.call(ctx, "RelationTypes", argNone{}, &out)
	return out, err
}

func (c *Client) Clients(ctx context.Context) ([]*graph.Client, error) {
	var out []*graph.Client
	err := c.call(ctx, "Clients", argNone{}, &out)
	return out, err
}

func (c *Client) Client(ctx context.Context, id string) (*graph.Client, error) {
	var out *graph.Client
	err := c.call(ctx, "Client", argID{id}, &out)
	return out, err
}

func (c *Client) Neighbors(ctx context.Context, node string, o graph.NeighborOptions) (*graph.Subgraph, error) {
	var out *graph.Subgraph
	err := c.call(ctx, "Neighbors", argNeighbors{node, o}, &out)
	return out, err
}

func (c *Client) Path(ctx context.Context, from, to string, o graph.PathOptions) (*graph.PathResult, error) {
	var out *graph.PathResult
	err := c.call(ctx, "Path", argPath{from, to, o}, &out)
	return out, err
}

func (c *Client) Trace(ctx context.Context, from string, o graph.TraceOptions) (*graph.TraceResult, error) {
	var out *graph.TraceResult
	err := c.call(ctx, "Trace", argTrace{from, o}, &out)
	return out, err
}

func (c *Client) Subgraph(ctx context.Context, around string, o graph.NeighborOptions) (*graph.Subgraph, error) {
	var out *graph.Subgraph
	err := c.call(ctx, "Subgraph", argNeighbors{around, o}, &out)
	return out, err
}
