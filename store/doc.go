// Package store keeps devgraph's graph in one bbolt file and implements graph.Store and
// graph.Notifier.
//
// Layout. The buckets and record encodings are owned by package migrations (which also
// carries a file from older schema versions to the current one). Identities, notes,
// devices and robots are JSON records; every secondary index (name, hint kind+value →
// identities, tag ↔ nodes with counts, target → notes, identity → bound devices, ref →
// device key, present devices, target → events; for relations, node → out, node → in,
// the (from, lower(from_port), type, to, lower(to_port)) tuple and type → relations) is
// written in the same transaction as its record, and counters (in the meta bucket, per
// tag, per relation type and per node) give totals without scanning. CheckRelations
// (run by CheckFile, so after every test) checks the relation indexes and counters
// against the records.
//
// Changelog. Every write records its events in the same transaction as the change: one
// event per node changed, all sharing the request id from the context (one is made per
// call when the context has none), the actor and the optional message. Conventions:
//
//   - identity.create/restore carry the identity without hints and tags; each hint and tag
//     it starts with is its own hint.add / tag.add event targeting the identity. So a bind
//     that creates an identity with three hints writes identity.create, hint.add ×3,
//     device.bind.
//   - Hints and tags are not nodes: hint.* and tag.* events target the node that holds them
//     and carry the hint ({"kind","value"}) or tag ({"tag"}) as before/after. hint.move
//     (a unit hint taken from another identity) targets the new holder and is also indexed
//     under the old one; its before/after name the holder ("identity").
//   - identity.delete carries the whole identity (hints and tags included, under
//     "notes" the notes it deletes and under "removed_relations" the ids of the relations
//     it removes) as before, after one hint.remove, tag.remove,
//     note.delete and device.unbind per item it takes along; identity.restore brings back
//     that before: identity.restore, hint.add and tag.add per item, note.add per note (same
//     ids, authors and times), and device.bind per device the delete's request unbound
//     (found through its device.unbind events) that still exists and is not bound
//     elsewhere meanwhile (others are skipped and logged).
//   - Merge writes hint.move and tag.add on the surviving identity, note.move per note and
//     device.bind per device moved, identity.merge on the survivor and identity.delete on
//     the merged-away one.
//   - Events about notes and devices are indexed under the identity they belong to as well
//     as under their own id, so a target filter on an identity shows its whole history.
//   - Declared relations (relations.go): relation.add / relation.update / relation.remove
//     target the relation (rel:<uuid>) and are indexed under both ends and the identity a
//     device end is bound to. A repeated add writes nothing. identity.delete removes the
//     identity's relations first (relation.remove each; a relation on its bound devices
//     stays) and lists their ids in its before under "removed_relations";
//     identity.restore brings back exactly those (their records from the relation.remove
//     events of the delete's request; one whose other end is gone or whose tuple is taken
//     again is skipped and logged), and after a merge none; merge rewrites the merged-away identity's relations onto the
//     survivor as relation.update keeping their ids, removing (relation.remove) one that
//     would become a self-loop or a duplicate of the survivor's. A node holds at most
//     graph.MaxRelationsPerNode relations and graph.MaxNotesPerNode notes, so each of
//     these fits one transaction.
//
// The hash chain is documented at graph.CanonicalEvent. The head (last seq and hash)
// lives in the meta bucket, so a cut-off tail is caught; a prune leaves a checkpoint and
// records the cut as a changelog.prune event (target "changelog": the seq range and the
// checkpoint's hash) in the same transaction, which VerifyChangelog reports and holds the
// checkpoint to. Pruning needs graph.MayPrune on the context and a before not in the future.
//
// Devices. ObserveDevices skips its write altogether when a snapshot changes nothing but
// last-seen times younger than a minute, so a server polling every few seconds does not
// fsync each time; a device is marked gone only when every source that saw it answered.
//
// Time. The store's one clock is Options.Now: event times, created/updated times, first
// and last seen, the export header and the migration backup's name all come from it (a
// test parses the package to keep it so). The uuidv7 ids of events, notes and requests
// carry the wall clock's millisecond for ordering and uniqueness only; nothing reads them
// back as times.
//
// Notifications. Subscribe never blocks a writer: each subscription has its own goroutine
// and a bounded queue, and one that falls behind is dropped, logged and told with a last
// nil call (see DB.Subscribe).
//
// Writes go through a group-commit queue: a lone writer commits at once; writers that
// arrive while a commit is in flight are gathered into the next bbolt transaction, and a
// failing write is dropped from its group and the rest re-run, so one bad request never
// takes others down. Reads use their own read transactions and never hold one while
// writing, unless the context carries a read view (BeginRead, graph.ReadViewer): then
// every read made with it shares that one transaction, and a write made with it fails at
// once (EINTERNAL) instead of waiting on a transaction its own caller holds.
//
// One write path. Every write helper changes the file only through txw's put and delete
// (records, indexes, counters, events, the changelog head, the prune checkpoint; a test
// parses the package to keep it so), so a write transaction's write set is exactly the
// list of those calls. DB.beforeCommit is the hook point: when set, it is handed that
// list after the transaction's last write and before bbolt commits, and an error from it
// rolls the whole group back. A committer that replicates write sets (an etcd cluster:
// one Txn fenced on the changelog head) plugs in there; today only tests use it.
//
// Import checks the whole input before writing anything, then writes it in one
// transaction (a regular file is read twice in place; anything else is spooled, as the
// check reads it, to an unlinked file in os.TempDir capped by graph.ImportMaxSizeFrom):
// bad lines, a line past MaxImportLine, a broken chain, a clash with what is here
// already, or a cancelled context leave the database as it was.
package store
