package graph

import (
	"context"
	"time"
)

// Device is one physical piece of hardware as the sources see it, persisted under a
// stable key so offline devices stay known.
type Device struct {
	ID           string            `json:"id"`  // device:<key>
	Key          string            `json:"key"` // most stable evidence: sn:<vid>:<pid>:<serial>, path:<vid>:<pid>:<usbpath>, alsa:<card id>, pw:<device.name>, robot:<serial>
	Ref          string            `json:"ref"` // current (or last) ref, e.g. usb:3-3.2
	Aliases      []string          `json:"aliases,omitempty"`
	Host         string            `json:"host,omitempty"`    // the machine it is attached to (see HostSlug); "" only in records older than hosts
	Source       string            `json:"source"`            // most physical source that sees it
	Sources      []string          `json:"sources,omitempty"` // every source that sees it
	Name         string            `json:"name"`
	Fingerprints []Fingerprint     `json:"fingerprints"`
	Attrs        map[string]string `json:"attrs,omitempty"` // manufacturer, product, driver, card number… (per-boot numbers live here, never in fingerprints)
	Infra        bool              `json:"infra,omitempty"` // hubs and other infrastructure: shown, never bound
	FirstSeen    time.Time         `json:"first_seen"`
	LastSeen     time.Time         `json:"last_seen"`
	Present      bool              `json:"present"`
	IdentityID   string            `json:"identity_id,omitempty"` // explicit binding
	Tags         []string          `json:"tags,omitempty"`
	// Nodes are the /dev nodes the device provides right now, with the stable links
	// that point at them. Live like Present's truth: filled from the current snapshot
	// when the device is present, never stored and never in a changelog event.
	Nodes []DeviceNode `json:"nodes,omitempty"`
}

// DeviceNode is one /dev node a device provides (its kernel name, read from sysfs) and
// the stable links under /dev that point at it (/dev/serial/by-id/…, /dev/snd/by-id/…).
type DeviceNode struct {
	Path  string   `json:"path"`            // /dev/ttyUSB0, /dev/snd/controlC1, /dev/input/event3
	Kind  string   `json:"kind"`            // tty, snd, video, input or hidraw
	Links []string `json:"links,omitempty"` // /dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0
}

// Kinds of DeviceNode.
const (
	NodeTTY    = "tty"
	NodeSnd    = "snd"
	NodeVideo  = "video"
	NodeInput  = "input"
	NodeHidraw = "hidraw"
)

// DeviceFilter selects devices.
type DeviceFilter struct {
	All        bool     `json:"all,omitempty"` // include devices not present
	Source     string   `json:"source,omitempty"`
	IdentityID string   `json:"identity_id,omitempty"` // bound to this identity
	Tags       []string `json:"tags,omitempty"`
	First      int      `json:"first,omitempty"`
	After      string   `json:"after,omitempty"`
}

// DeviceService is devices as people and agents see them: stored records joined with the
// live sources and read against the identities. Devices are named by id, key or any ref
// they have had ("usb:3-3.2").
type DeviceService interface {
	// Devices lists devices with their match (present only unless f.All), a page at a
	// time, with the total and the next cursor ("" on the last).
	Devices(ctx context.Context, f DeviceFilter) (devs []*DeviceView, total int, next string, err error)
	// Device finds one device by id or ref, with its match; ENOTFOUND (with a suggestion)
	// when no device has had that id or ref.
	Device(ctx context.Context, idOrRef string) (*DeviceView, error)
	// Unbound lists present devices without a high, unambiguous match or explicit binding.
	Unbound(ctx context.Context) ([]*DeviceView, error)
	// Match reads fingerprints against the identities. EINVALID for an unknown kind.
	Match(ctx context.Context, fps []Fingerprint) (*Match, error)
	// Bind binds a device to an existing identity or a new one, copying its fingerprints
	// in as hints. ENOTFOUND for an unknown ref or identity; ECONFLICT for a taken slug or
	// a unit hint held by another identity (unless in.Move); EINVALID for an
	// infrastructure device.
	Bind(ctx context.Context, in BindInput) (*BindResult, error)
	// Unbind removes a device's explicit binding; ENOTFOUND for an unknown ref, EINVALID
	// when it has none.
	Unbind(ctx context.Context, ref string) (*Device, error)
	// Sources reports each source's status from the latest snapshot (empty without
	// hardware).
	Sources(ctx context.Context) ([]SourceStatus, error)
}

// DeviceReader reads stored device records as they are, without the live snapshot and
// the matching DeviceService adds: what a name index or a find result needs (ids, refs,
// names, tags, bindings). graph.Store provides it; it writes nothing.
type DeviceReader interface {
	// FindDeviceByID finds a stored device by id, key or any ref it has had; ENOTFOUND
	// (with a suggestion) otherwise.
	FindDeviceByID(ctx context.Context, idOrRef string) (*Device, error)
	// FindDevices returns a page of stored devices, the total and the next cursor.
	FindDevices(ctx context.Context, f DeviceFilter) (devs []*Device, total int, next string, err error)
}

// DeviceStore keeps the device records discovery writes. It is the store's side of
// devices, for the identity service and discovery only: edges and the socket reach
// devices through DeviceService.
type DeviceStore interface {
	DeviceReader
	// ObserveDevices reconciles a snapshot with the stored devices: new or returning
	// devices appear, present ones whose every source answered and none saw disappear,
	// seen-again ones only refresh last seen (no event). Returns the events written.
	// Each event's actor is snap.Actor, or discovery:<that device's Source>
	// (discovery:live when it has none) when snap.Actor is "", so one snapshot spanning
	// several sources records each change under its own source. The context's actor is
	// not used.
	ObserveDevices(ctx context.Context, snap *Snapshot) ([]*Event, error)
	// BindDevice is the store-level bind: one transaction that may create the identity,
	// adds the hints it lacks and records the binding (see BindRequest).
	BindDevice(ctx context.Context, r BindRequest) (*BindResult, error)
	// UnbindDevice removes a device's explicit binding; EINVALID when it has none.
	UnbindDevice(ctx context.Context, deviceID string) (*Device, error)
}
