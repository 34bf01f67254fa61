// Package identity recognises physical things again from their fingerprints and binds
// devices to identities. It holds the matcher (fingerprints against the hint index, with
// a score, a confidence and an explanation) and Service, which composes the store, the
// live sources and the robot fleet into a graph.Service.
//
// # Scoring rules
//
// A device's fingerprints are looked up in the store's hint index (Store.FindHintHolders,
// one batched call for every device being matched; never a scan over identities). Every
// identity holding at least one of them is a candidate. For each candidate, each agreeing
// fingerprint is read with two counts: how many identities hold it (holders) and how many
// present devices in the snapshot show it (shown). The rules, strongest first:
//
//  1. Unit. A unit fingerprint (usb_serial, mac, robot_serial) held by exactly this one
//     identity and shown by exactly one present device is enough alone: score 1.0, high.
//     Held by two identities it is ambiguous (never high); shown by two devices (cloned
//     serials) it only counts like a model.
//  2. Model and names. The model (usb_id) and at least one name fingerprint (alsa_card_id,
//     alsa_longname, midi_client, pipewire_device) agree, the model and that name are held
//     by this identity alone, and the model is shown by exactly one present device: high,
//     score 0.85 + 0.05 per unique name (up to two) + 0.05 when the port agrees too. The
//     port is not needed, so a serial-less synth moved to another port is still high; the
//     explanation names the port it was known at and says it moved.
//  3. Place. When rule 2 fails because two present devices show the same model (twins) or
//     two identities hold it (bound twins), only the port can tell them apart: the model
//     agrees and a usb_path held by this identity alone is the device's port: high, score
//     0.8, and the explanation says the port is the only evidence (identical units swapped
//     between ports can be told apart by nothing else). A device whose only evidence is
//     model and port (no names, no serial) is read the same way.
//  4. Everything else is medium or low. The score adds what agreed — a non-unique unit
//     0.3, model 0.3, port 0.15, each name 0.1 (at most 0.3) — capped at 0.75; medium from
//     0.4, low below. A twin plugged into a third port while the other twin stays on its
//     port matches both twin identities on model and names only: medium, ambiguous.
//
// Contradictions cap a candidate: an identity holding a unit fingerprint of the kind the
// device shows (for usb_serial: the same vid:pid) with another value is a different unit
// (at most 0.3, low); one holding a serial the device does not show at all is at most
// medium. When candidates are high by different rules the stronger rule wins (unit over
// model and names over place) and the others are at most medium. Evidence claimed by two identities, or two candidates tying for best, make
// the match ambiguous, and an ambiguous match is never high. A match lists its best five
// candidates; only the best four of each device are loaded to check contradictions.
//
// # Service
//
// Service implements graph.Service: identities, hints, tags, notes, the changelog and the
// database are the store's own (embedded interfaces); devices and robots are the
// service's. The store's plumbing — graph.DeviceStore (recording snapshots, store-level
// binds) and graph.RobotStore — stays an unexported field, so no edge holding a
// graph.Service can reach it. Live state (devices, unbound, match, bind, sources) first
// takes a snapshot from Live and reconciles it into the store (DeviceStore.ObserveDevices)
// unless that snapshot was already observed. Open starts a poll loop doing the same every
// PollInterval, so hot-plug shows up as device.appear/disappear events. The snapshot is
// recorded in one transaction with no actor of its own (graph.Snapshot.Actor), so the
// store names each appear/disappear discovery:<that device's source> (usb, alsa,
// pipewire, robot); auto-bind binds as discovery:<the device's source> too.
//
// BeginRead forwards to the store's graph.ReadViewer (embedding does not promote it):
// reads with its context share one read transaction, and live reads inside it use the
// snapshot reconciled when the view began — they never observe, since that write (or a
// wait for the poller's) could wait on the view itself. Call Observe first for fresh
// live state.
//
// # Relations and traversal
//
// Declared relations are the store's (graph.RelationStore); Relate, UpdateRelation and
// Unrelate resolve typed node ids first ("jdxi", "usb:3-3.2") and refuse a client end
// (live endpoints cannot be declared). Observed relations and clients are the live
// snapshot's (Snapshot.Relations, Snapshot.Clients), never stored. A node's relations
// are those of its vertex: a bound identity and its present devices — bound explicitly
// or by a high, unambiguous match, as DeviceView.BoundTo says — are one thing, so a
// relation declared on the identity shows on the device while it is plugged in and the
// device's observed relations show on the identity. FindRelations lists declared ones
// first (by id), then observed ones (by id), behind one opaque cursor; the total counts
// both. Neighbors, Path, Trace and Subgraph observe once, open one read view and hand
// graph's pure traversal functions an edge source over that view, that snapshot and its
// bindings: Edges of a vertex are the store's RelationsOf its nodes plus the observed
// relations touching them. Options are checked before anything is read.
//
//	svc := identity.New(st, live, fleet) // live, fleet may be nil
//	svc.PollInterval = 2 * time.Second   // 0: no background polling
//	svc.AutoBind = false                 // bind high, unambiguous matches as discovery:<source>
//	svc.Logger = logger
//	if err := svc.Open(); err != nil { … }
//	defer svc.Close()
package identity
