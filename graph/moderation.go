package graph

import (
	"context"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/graph/readpath"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/social"
)

// Moderation is reports and moderators' actions (internal/moderation):
// it checks the viewer's right to each.
type Moderation interface {
	Report(ctx context.Context, v social.Viewer, in social.NewReport) (*social.Report, error)
	Reports(ctx context.Context, v social.Viewer, status social.ReportStatus, p social.PageRequest) (social.Connection[*social.Report], error)
	Resolve(ctx context.Context, v social.Viewer, id string, action social.ModerationAction) (*social.Report, error)
}

// report files the viewer's report (Mutation.report).
func (r *Resolver) report(ctx context.Context, in model.ReportInput) (*social.Report, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return nil, err
	}
	return r.Moderation.Report(ctx, v, social.NewReport{PostID: deref(in.PostID), CommentID: deref(in.CommentID),
		UserID: deref(in.UserID), Reason: in.Reason})
}

// resolveReport acts on a report (Mutation.resolveReport).
func (r *Resolver) resolveReport(ctx context.Context, id string, action model.ModerationAction) (*social.Report, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return nil, err
	}
	return r.Moderation.Resolve(ctx, v, id, social.ModerationAction(action))
}

// reports is the moderators' queue (Query.reports).
func (r *Resolver) reports(ctx context.Context, status *model.ReportStatus, first *int, after *string) (*model.ReportConnection, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return nil, err
	}
	p, err := social.NewPageRequest(first, after)
	if err != nil {
		return nil, err
	}
	st := social.ReportOpen
	if status != nil {
		st = social.ReportStatus(*status)
	}
	c, err := r.Moderation.Reports(ctx, v, st, p)
	if err != nil {
		return nil, err
	}
	out := &model.ReportConnection{PageInfo: readpath.PageInfo(c), Edges: make([]*model.ReportEdge, len(c.Items))}
	for i, rep := range c.Items {
		out.Edges[i] = &model.ReportEdge{Cursor: c.Cursors[i], Node: rep}
	}
	return out, nil
}

// reportAction is a resolved report's action (Report.action), or nil.
func reportAction(rep *social.Report) *model.ModerationAction {
	if rep.Action == "" {
		return nil
	}
	a := model.ModerationAction(rep.Action)
	return &a
}

// reportedPost is the post a report names: as the moderators' queue read
// it, or else as the viewer may see it.
func reportedPost(ctx context.Context, rep *social.Report) (*social.Post, error) {
	if rep.Post != nil || rep.Target.Kind != social.ReportPost {
		return rep.Post, nil
	}
	return loader.For(ctx).Posts.Load(ctx, rep.Target.ID)
}

// reportedComment is reportedPost for a comment.
func reportedComment(ctx context.Context, rep *social.Report) (*social.Comment, error) {
	if rep.Comment != nil || rep.Target.Kind != social.ReportComment {
		return rep.Comment, nil
	}
	return loadComment(ctx, rep.Target.ID)
}

// reportedUser is reportedPost for a user.
func reportedUser(ctx context.Context, rep *social.Report) (*social.User, error) {
	if rep.User != nil || rep.Target.Kind != social.ReportUser {
		return rep.User, nil
	}
	return loader.For(ctx).Users.Load(ctx, rep.Target.ID)
}
