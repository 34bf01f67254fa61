package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
)

// Resource URIs.
const (
	SchemaURI          = "devgraph://schema"
	ChangelogRecentURI = "devgraph://changelog/recent"
	nodePrefix         = "devgraph://node/"
	robotPrefix        = "devgraph://robot/"
	robotSuffix        = "/state"
	robotParamsSuffix  = "/parameters"
	recentEvents       = 50
)

// NodeURI returns the resource URI of a node (ids keep their colons: the template is
// devgraph://node/{+id}). A client's id may hold spaces ("client:alsa:Bitwig Studio"),
// which a URI cannot carry: they are percent-encoded, and nodeID decodes them.
func NodeURI(id string) string { return nodePrefix + uriEscaper.Replace(id) }

var uriEscaper = strings.NewReplacer("%", "%25", " ", "%20")

// nodeID is the id in a node URI, percent-decoded (ids themselves hold no '%'); a URI
// whose escapes do not decode is taken as written.
func nodeID(uri string) string {
	raw := strings.TrimPrefix(uri, nodePrefix)
	if strings.Contains(raw, "%") {
		if id, err := url.PathUnescape(raw); err == nil {
			return id
		}
	}
	return raw
}

// RobotStateURI returns the resource URI of a robot's live state.
func RobotStateURI(robot string) string { return robotPrefix + robot + robotSuffix }

// RobotParametersURI returns the resource URI of a robot's parameters.
func RobotParametersURI(robot string) string { return robotPrefix + robot + robotParamsSuffix }

func (s *Server) addResources() {
	s.mcp.AddResource(mcp.NewResource(SchemaURI, "GraphQL schema",
		mcp.WithResourceDescription("The GraphQL schema (SDL) that graph_query accepts."),
		mcp.WithMIMEType("application/graphql")),
		s.readSchema)
	s.mcp.AddResource(mcp.NewResource(ChangelogRecentURI, "Recent changes",
		mcp.WithResourceDescription(fmt.Sprintf("The newest %d changelog events (who changed what), newest first. Subscribe to hear of every change.", recentEvents)),
		mcp.WithMIMEType("application/json")),
		s.readChangelog)
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(nodePrefix+"{+id}", "Node",
		mcp.WithTemplateDescription("One node with everything attached: an identity (hints, tags, notes, bound devices, relations), a device "+
			"(ref, fingerprints, match, binding, tags, notes, relations), a client (its observed relations), a relation, a note or a tag "+
			"(the nodes carrying it). Relations are declared first, then observed (observed: true), up to a page, with relations_total. Ids contain colons: "+
			"devgraph://node/identity:roland-jd-xi, devgraph://node/usb:3-3.2. Subscribe to hear when it changes, hot-plug included."),
		mcp.WithTemplateMIMEType("application/json")),
		s.readNode)
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(robotPrefix+"{+id}"+robotSuffix, "Robot state",
		mcp.WithTemplateDescription("A robot's live state (pose, state, battery, armed, gripper, goal, parameters): "+
			"devgraph://robot/robot:scout/state or devgraph://robot/identity:scout/state. Subscribers hear about changes while it moves."),
		mcp.WithTemplateMIMEType("application/json")),
		s.readRobot)
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(robotPrefix+"{+id}"+robotParamsSuffix, "Robot parameters",
		mcp.WithTemplateDescription("A robot's parameters and their units: max speed (m/s), turn rate (rad/s), acceleration (m/s²), "+
			"arrival threshold (m), low-battery floor (%), detect range and grasp reach (m), geofence (points in m). "+
			"Change them with robot_parameters: devgraph://robot/robot:scout/parameters."),
		mcp.WithTemplateMIMEType("application/json")),
		s.readRobotParams)
}

func jsonContents(uri string, v any) ([]mcp.ResourceContents, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", uri, err)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(b)}}, nil
}

// resourceError keeps user-fixable errors' messages and hides faults.
func (s *Server) resourceError(uri string, err error) error {
	if graph.ErrorCode(err) == graph.EINTERNAL {
		s.log.Error("resource read failed", "uri", uri, "err", err)
		return errors.New("devgraph internal error reading " + uri + "; the server log has the details")
	}
	return errors.New(sentences(graph.ErrorMessage(err), adviceText("", graph.ErrorSteps(err))))
}

func (s *Server) readSchema(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	sdl, err := s.schemaSDL()
	if err != nil {
		return nil, s.resourceError(req.Params.URI, err)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/graphql", Text: sdl}}, nil
}

func (s *Server) readChangelog(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	evs, _, err := s.svc.FindEvents(ctx, graph.EventFilter{First: recentEvents})
	if err != nil {
		return nil, s.resourceError(req.Params.URI, err)
	}
	views := make([]eventView, len(evs))
	for i, ev := range evs {
		views[i] = viewEvent(ev, false)
	}
	return jsonContents(req.Params.URI, map[string]any{"events": views})
}

func (s *Server) readNode(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	uri := req.Params.URI
	v, err := s.nodeDoc(ctx, nodeID(uri))
	if err != nil {
		return nil, s.resourceError(uri, err)
	}
	return jsonContents(uri, v)
}

func (s *Server) nodeDoc(ctx context.Context, raw string) (any, error) {
	if raw == "" {
		return nil, graph.FieldErrorf(graph.EINVALID, "id", "devgraph://node/ needs an id, e.g. devgraph://node/identity:roland-jd-xi")
	}
	if graph.KindOf(raw) == graph.KindTag {
		tag := strings.TrimPrefix(raw, "tag:")
		ids, total, _, err := s.svc.FindTagged(ctx, tag, s.opts.MaxPage, "")
		if err != nil {
			return nil, err
		}
		return map[string]any{"id": raw, "kind": "tag", "tag": tag, "count": total, "nodes": nonNil(ids)}, nil
	}
	id, err := s.resolveNode(ctx, raw)
	if err != nil {
		return nil, err
	}
	switch graph.KindOf(id) {
	case graph.KindIdentity:
		ident, err := s.svc.FindIdentityByID(ctx, id, graph.IdentityParts{Notes: true, Devices: true})
		if err != nil {
			return nil, err
		}
		return s.withRelations(ctx, id, map[string]any{"kind": "identity", "identity": ident})
	case graph.KindDevice:
		dv, err := s.svc.Device(ctx, id)
		if err != nil {
			return nil, err
		}
		notes, _, _, err := s.svc.FindNotes(ctx, graph.NoteFilter{Target: id, First: s.opts.MaxPage})
		if err != nil {
			return nil, err
		}
		return s.withRelations(ctx, id, map[string]any{"kind": "device", "device": dv, "notes": nonNil(notes)})
	case graph.KindClient:
		cl, err := s.svc.Client(ctx, id)
		if err != nil {
			return nil, err
		}
		return s.withRelations(ctx, id, map[string]any{"kind": "client", "client": cl})
	case graph.KindRelation, graph.KindObserved:
		r, err := s.svc.FindRelationByID(ctx, id)
		if err != nil {
			return nil, err
		}
		return map[string]any{"kind": "relation", "relation": viewRelation(r, s.nodeNames(ctx))}, nil
	case graph.KindNote:
		n, err := s.svc.FindNoteByID(ctx, id)
		if err != nil {
			return nil, err
		}
		return map[string]any{"kind": "note", "note": n}, nil
	}
	return map[string]any{"id": id, "kind": string(graph.KindOf(id))}, nil
}

// withRelations adds a node's relations (its vertex's, declared first, then observed;
// one page) and their total to doc.
func (s *Server) withRelations(ctx context.Context, id string, doc map[string]any) (any, error) {
	rels, total, _, err := s.svc.FindRelations(ctx, graph.RelationFilter{Node: id, First: s.opts.MaxPage})
	if err != nil {
		return nil, err
	}
	names := s.nodeNames(ctx)
	views := make([]relationView, len(rels))
	for i, r := range rels {
		views[i] = viewRelation(r, names)
	}
	doc["relations"] = views
	doc["relations_total"] = total
	return doc, nil
}

func (s *Server) readRobot(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	uri := req.Params.URI
	robot := strings.TrimSuffix(strings.TrimPrefix(uri, robotPrefix), robotSuffix)
	st, err := s.svc.Robot(ctx, robot)
	if err != nil {
		return nil, s.resourceError(uri, err)
	}
	return jsonContents(uri, st)
}

// robotParams is the parameters resource: the values, with the robot they belong to.
type robotParams struct {
	Robot    string            `json:"robot"`
	Identity string            `json:"identity,omitempty"`
	Params   graph.RobotParams `json:"parameters"`
}

func (s *Server) readRobotParams(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	uri := req.Params.URI
	robot := strings.TrimSuffix(strings.TrimPrefix(uri, robotPrefix), robotParamsSuffix)
	st, err := s.svc.Robot(ctx, robot)
	if err != nil {
		return nil, s.resourceError(uri, err)
	}
	return jsonContents(uri, robotParams{Robot: st.Ref, Identity: st.IdentityID, Params: st.Params})
}

// resourceKey reduces a subscribed URI to what changes are matched against, resolving
// short ids and refs so every spelling of a node hears about it.
func (s *Server) resourceKey(ctx context.Context, uri string) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	switch {
	case uri == ChangelogRecentURI:
		return keyChangelog
	case uri == SchemaURI:
		return keySchema
	case strings.HasPrefix(uri, robotPrefix) && (strings.HasSuffix(uri, robotSuffix) || strings.HasSuffix(uri, robotParamsSuffix)):
		robot, _ := robotOf(uri)
		if st, err := s.svc.Robot(ctx, robot); err == nil {
			return robotKey(st.Ref)
		}
		return robotKey(robot)
	case strings.HasPrefix(uri, nodePrefix):
		raw := nodeID(uri)
		if graph.KindOf(raw) == graph.KindTag {
			return nodeKey(raw)
		}
		if id, err := s.svc.ResolveID(ctx, raw); err == nil {
			return nodeKey(id)
		}
		// Not there yet (a device that has not been plugged in): match the id as given,
		// so its device.appear is heard.
		if graph.IsRef(raw) {
			if d, err := s.opts.Devices.FindDeviceByID(ctx, raw); err == nil {
				return nodeKey(d.ID)
			}
		}
		return nodeKey(raw)
	}
	return "uri:" + uri
}
