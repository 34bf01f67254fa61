// Package sources reads live hardware — USB from sysfs, ALSA cards and sequencer clients
// from procfs, PipeWire from pw-dump JSON — and merges what they see into one
// graph.ObservedDevice per physical device. Live ties them together behind graph.Live;
// other readers (the robot package) plug in as a Source.
//
// # Readers
//
// usb walks <sys-root>/bus/usb/devices. Each entry is a relative symlink into
// devices/pci…/usbN/N-M/…, resolved one level with os.Readlink (a link to a link is a loop
// or a chain and is skipped); attributes are read by name and never through further
// links: idVendor, idProduct, serial, manufacturer, product (each optional except the
// ids), busnum, devnum, devpath, speed, bDeviceClass, and bInterfaceClass and the bound
// driver of each N-M:C.I interface directory. Interface entries are not devices; hubs
// (class 09) are reported with Infra set and never hide the devices behind them, which
// have entries of their own. Root hubs (usbN) are infrastructure devices too, ref
// usb:usb3, key usb-root:<controller>:<bus> (usb-root:0000:00:14.0:3: the controller's
// PCI address from the sysfs path, else the root hub's serial, which Linux sets to the
// controller's name; the bus tells a controller's USB 2 and USB 3 root hubs apart), with
// their usb_id as their only fingerprint, so every via chain ends at its controller.
//
// alsa reads <proc-root>/asound/cards (" 1 [JDXi           ]: USB-Audio - JD-Xi" and the
// indented long name "Roland JD-Xi at usb-0000:00:14.0-3.2, high speed"), cardN/id,
// cardN/usbid ("0582:01a9"), cardN/usbbus ("003/007"), cardN/midiN, and seq/clients in
// the formats of old and new kernels ("[Kernel]", "[Kernel Legacy]", "[User UMP MIDI2]",
// a card=N where the text carries one, UMP and pool lines), with each port's
// subscriptions as seq_clientmgr.c prints them under it: "    Connecting To: 130:0[r:0],
// 131:1[t:2][ex]" (this port → there) and "    Connected From: 20:0" (there → this port).
//
// pipewire parses pw-dump's JSON from a file or from a Runner (by default `pw-dump`):
// Device objects (device.name, api.alsa.card, sysfs.path, device.bus-path, vendor and
// product ids), Nodes (node.name, device.id, media.class, application.name), Ports
// (port.name, node.id, direction) — those of the Midi-Bridge node name the sequencer
// client behind them in object.path (alsa:seq:default:client_20:capture_0) — and Links
// (output-node-id, output-port-id, input-node-id, input-port-id and state in the info,
// or link.output.node … in the props). Numbers printed where strings belong and strings
// where numbers belong are coerced.
//
// Text read from hardware is kept as read when it is valid UTF-8 and escaped
// (graph.EscapeHardwareText) when not.
//
// # Failing alone
//
// Each reader fails alone: a missing or unreadable root fails that source, reported in
// Snapshot.Sources with OK=false and a reason ("usb: /sys/bus/usb/devices: no such file or
// directory"), while the others answer. A broken entry — garbage in an attribute, a
// truncated file, a symlink loop, a device that vanished while being read — skips that
// entry only; the source stays OK and its Error carries a "warning:" naming what was
// skipped. A truncated pw-dump fails the pipewire source rather than report half the
// objects.
//
// # Merging
//
// Evidence is linked through the USB device, whichever source names it:
//
//   - a card's usbbus (bus/devnum) finds the sysfs device; failing that, the bus from
//     usbbus and the devpath from the long name give its bus-port path (3 + "3.2" →
//     3-3.2); failing that, the long name's controller and devpath find the one device
//     there;
//   - a kernel sequencer client joins its card by card=N, else by the kernel's static
//     numbering (client 16 + 4 × card) when the names agree or the card has a rawmidi,
//     else by a name exactly one card carries; a static client whose card is missing is
//     skipped rather than shown twice; System, Midi Through and user clients are not
//     devices;
//   - a PipeWire device joins its card by api.alsa.card (or alsa.card, api.alsa.path
//     hw:N), else the USB device named in sysfs.path, else the controller and devpath of
//     device.bus-path;
//   - Midi-Bridge ports join their sequencer client by number (per boot, but one snapshot
//     agrees with itself); without the alsa source, a PipeWire device of the same name.
//
// Two USB devices are never joined: sources that disagree are noted, not believed.
//
// A device is only ever half there for a moment — during an unplug the kernel tears down
// the sysfs entry while ALSA and PipeWire still list the card; during a plug sysfs shows
// the device before ALSA has a card. So when the usb source answered, a card or PipeWire
// device that places itself on USB (usbid, usbbus, an "at usb-…" long name, a USB
// sysfs.path or device.bus-path) at a place the usb reading does not show is left out of
// the snapshot, with a note in its source's warning ("card 2 (USB) … at usb 3-3.1,
// 1235:8210: not in the usb scan …"). Keyed from ALSA alone it would show under a second
// key (path:… instead of sn:…) and split one unit into two records; left out, the store
// sees the device's record (whose sources include usb) gone, and the same key back when
// usb shows it again. One seen by usb before ALSA is simply a usb-only device with its
// usual key. A card whose place usb does show but whose evidence disagrees is kept (and
// noted, above).
//
// When the usb source failed (or is disabled) the fallback stays: ALSA and PipeWire key
// the device themselves, so it does not vanish while sysfs is unreadable. To avoid minting
// a second key for a unit with a serial, Live remembers the serials of its last good usb
// reading by ids and place, and a device ALSA or PipeWire place at the same ids and place
// gets its sn: key (and serial attribute) from that memory. A Live that never read usb, or
// a place whose ids changed, falls back to path:<vid>:<pid>:<usb path> — a serial device
// then shows under a second key until usb answers; guessing a serial from PipeWire's
// device.serial (udev's mangled vendor_model_serial) was judged worse than that.
//
// Fingerprints each reader contributes (per-boot numbers — card, client and device
// numbers, PipeWire ids — go in Attrs, never here):
//
//	usb       usb_serial (vid:pid:serial, when there is a serial), usb_id (vid:pid),
//	          usb_path (bus-port path, 3-3.2)
//	alsa      alsa_card_id (the card id without the _1, _2 ALSA adds to a second card of
//	          the same name, which depends on plug order), alsa_longname (without
//	          " at usb-…, … speed" or " at 0x… irq N", so it survives a move), and
//	          usb_id / usb_path from usbid, usbbus and the long name
//	seq       midi_client (the client's name)
//	pipewire  pipewire_device (device.name, as read), usb_id and usb_path from its
//	          ids and sysfs.path when no other source gave them; midi_client from the
//	          Midi-Bridge ports
//
// Key (the store's stable key): sn:<vid>:<pid>:<serial> when there is a serial, else
// path:<vid>:<pid>:<usb path>, else alsa:<card id>, else pw:<device.name>
// (alsa:seq:<client> and pw:midi:<client> for a client seen alone). Because ALSA and
// PipeWire know the USB ids and place too, a serial-less device keeps its key while the
// usb source is down (a serial device too, from Live's memory of the last usb reading). Ref (where it is now): usb:<path>, else alsa:card:<id>, else
// pipewire:<device.name>. Name: as lsusb names it — the USB product string unless it is
// missing or generic (GenericProduct: "USB2.0 Hub", "USB Audio", "Keyboard", "xHCI Host
// Controller" …), else usb.ids' "Vendor Product" ("Holtek Semiconductor, Inc. Keyboard
// LKS02"); then the card's short name, the client name, PipeWire's description, else a
// name made of the interface class and ids ("USB input device 04d9:1702"). usb.ids is
// Live.USBIDs, else the first of DefaultUSBIDsPaths; it is read only for the vendors a
// reading sees and kept while the file's size and time stay the same, and a bad file is a
// usb warning, never a failure. Attrs hold manufacturer, product, serial, usb_ids_vendor,
// usb_ids_product, speed, busnum, devnum, classes, drivers, card number and names, client
// number and ports, PipeWire ids, nodes and bus path.
//
// # /dev nodes
//
// ObservedDevice.Nodes are the /dev nodes a device provides now: for a USB device the
// class devices below its sysfs directory (walked without entering a symlink or a device
// behind it, at most six levels down) whose uevent names a DEVNAME of kind tty, snd,
// video, input or hidraw; for a card that is not USB the controlC/pcmC/midiC entries of
// <sys-root>/class/sound (names only). Each carries the udev links under Live.DevRoot
// (serial/by-id, serial/by-path, snd/…, v4l/…, input/…) that point at it, read with
// Readlink and never followed; a link leading outside the root is ignored. They are live
// state, like presence: never fingerprints, never stored.
//
// # Observed relations and clients
//
// Snapshot.Relations holds what the sources see connecting things right now, never
// stored: Observed set, Source the source that saw it, id graph.ObservedRelationID of the
// tuple (stable while the relation stays), ends device:<key> of a merged device in
// Snapshot.Devices or the id of a client in Snapshot.Clients:
//
//   - via (usb): every USB device → the hub it hangs off, to port "port N" of that hub
//     (3-3.2 → 3-3 "port 2", 3-3 → usb3 "port 3"); chained hubs chain, and the root hub
//     ends it. A device whose hub the reading lacks has no via (no chain is guessed);
//   - subscribed (alsa): each sequencer subscription, sender port → destination port,
//     with the ports' names as ports and the kernel's flags in attrs (timestamp real or
//     tick and queue, exclusive). A subscription listed at both of its ends is one
//     relation. Those of System (client 0: Timer and Announce, which every sequencer
//     application watches) are housekeeping and left out; one naming a client or port
//     the file does not list is noted and skipped;
//   - linked (pipewire): each Link, output port → input port, the ports' port.name as
//     ports, from_node, to_node (node.name) and state in attrs; links in state error or
//     unlinked carry nothing and are left out; one whose ports the dump lacks is noted.
//
// An end is the merged device its evidence belongs to: a kernel sequencer client's
// device, a device node's PipeWire device, a Midi-Bridge port's sequencer client's
// device. Anything else is a client (graph.Client), id client:<source>:<name>: a
// user-space sequencer client (client:alsa:Bitwig Studio), a kernel client that is no
// device (client:alsa:Midi Through), a PipeWire node no device owns, named by its
// application.name, node.description or node.name (client:pipewire:Firefox, a virtual
// sink). A second client of a source and name, by client number or node id, gets #2, a
// third #3. User sequencer clients and PipeWire streams (media.class Stream/…) are listed
// even without relations; other clients only as an end of one. Evidence left out of the
// snapshot (a device unplugging) takes its relations with it; a relation from a thing to
// itself is dropped; a source that failed contributes none. Per-boot numbers (client
// number, node id) are client attrs, never ids.
//
// # Live
//
// Live.Snapshot shares one reading between callers for ShareWindow (500 ms by default)
// and lets callers that arrive during a reading wait for it instead of starting their
// own. That shared reading runs on a goroutine of Live's; Close cancels it and waits for
// it. Demo and NewDemo point every source at a fixture rig (package fixture).
package sources
