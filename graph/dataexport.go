package graph

import (
	"context"
	"errors"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/internal/social"
)

// Exports starts and reads the viewer's data exports: the store's export
// service and the archives' signed addresses (internal/gateway wires
// them).
type Exports interface {
	RequestExport(ctx context.Context, userID string) (*social.DataExport, error)
	LatestExport(ctx context.Context, userID string) (*social.DataExport, error)
	// ExportURL is the signed address of a READY export's archive.
	ExportURL(e *social.DataExport) string
}

// errNoExports answers a gateway built without a blob store.
var errNoExports = errors.New("data exports need a blob store")

func (r *Resolver) requestDataExport(ctx context.Context) (*social.DataExport, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return nil, err
	}
	if r.Exports == nil {
		return nil, errNoExports
	}
	return r.Exports.RequestExport(ctx, v.UserID)
}

func (r *Resolver) dataExport(ctx context.Context) (*social.DataExport, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil || r.Exports == nil {
		return nil, err
	}
	return r.Exports.LatestExport(ctx, v.UserID)
}

func exportURL(r *Resolver, e *social.DataExport) *string {
	if r.Exports == nil {
		return nil
	}
	if u := r.Exports.ExportURL(e); u != "" {
		return &u
	}
	return nil
}

func exportBytes(e *social.DataExport) *int {
	if e.Status != social.ExportReady {
		return nil
	}
	n := int(e.Bytes)
	return &n
}

func exportStatus(e *social.DataExport) model.ExportStatus { return model.ExportStatus(e.Status) }
