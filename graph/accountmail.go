package graph

import (
	"context"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/social"
)

// authResult turns what a session-opening call returned into the
// mutation's payload, so each such resolver is one call.
func authResult(ctx context.Context) func(*auth.Result, error) (*model.AuthPayload, error) {
	return func(res *auth.Result, err error) (*model.AuthPayload, error) {
		if err != nil {
			return nil, err
		}
		return authPayload(ctx, res), nil
	}
}

// orNullBool is a nullable Boolean: b, or null when not ok.
func orNullBool(b, ok bool) *bool {
	if !ok {
		return nil
	}
	return &b
}

// poster is the viewer of a mutation that posts (a post, a comment),
// refused while its address must be confirmed first.
func (r *Resolver) poster(ctx context.Context) (social.Viewer, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return v, err
	}
	return v, r.Accounts.CanPost(ctx, v.UserID)
}

func (r *Resolver) logout(ctx context.Context) (bool, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return false, err
	}
	if err := r.Accounts.Logout(ctx, v); err != nil {
		return false, err
	}
	return true, nil
}

func (r *Resolver) changePassword(ctx context.Context, current, next string) (*model.AuthPayload, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return nil, err
	}
	return authResult(ctx)(r.Accounts.ChangePassword(ctx, v, current, next))
}

func (r *Resolver) changeEmail(ctx context.Context, newEmail, password string) (bool, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return false, err
	}
	return r.Accounts.ChangeEmail(ctx, v, newEmail, password)
}

func (r *Resolver) deleteAccount(ctx context.Context, password string) (bool, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return false, err
	}
	return r.Accounts.DeleteAccount(ctx, v, password)
}

func (r *Resolver) resendVerification(ctx context.Context) (bool, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return false, err
	}
	return r.Accounts.ResendVerification(ctx, v)
}

// verifyEmail confirms an address; the account it returns is primed in
// the request's loader, read after the write.
func (r *Resolver) verifyEmail(ctx context.Context, token string) (*social.User, error) {
	u, err := r.Accounts.VerifyEmail(ctx, token)
	if err != nil {
		return nil, err
	}
	loader.For(ctx).Users.Prime(u.ID, u)
	return u, nil
}
