package search

import (
	"context"

	"github.com/devgraph/devgraph/graph"
)

// ServiceNames is a graph.NameSource over a graph.Service, for an index built where no
// store is at hand (the CLI's `devgraph query` on a file or through a server's socket, a
// relaying server's HTTP front end): devices are read as the service shows them (their
// stored record inside each view). A server builds its index over the store itself.
func ServiceNames(svc graph.Service) graph.NameSource { return serviceNames{svc} }

type serviceNames struct{ graph.Service }

func (s serviceNames) FindDevices(ctx context.Context, f graph.DeviceFilter) ([]*graph.Device, int, string, error) {
	views, total, next, err := s.Devices(ctx, f)
	devs := make([]*graph.Device, len(views))
	for i, v := range views {
		devs[i] = &v.Device
	}
	return devs, total, next, err
}

func (s serviceNames) FindDeviceByID(ctx context.Context, idOrRef string) (*graph.Device, error) {
	v, err := s.Device(ctx, idOrRef)
	if err != nil {
		return nil, err
	}
	return &v.Device, nil
}
