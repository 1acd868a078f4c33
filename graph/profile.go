package graph

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/graph/readpath"
	"github.com/socialgw/gateway/internal/gqlerr"
	"github.com/socialgw/gateway/internal/ratelimit"
	"github.com/socialgw/gateway/internal/social"
)

// ProfileStore edits profiles (redisstore.ProfileService).
type ProfileStore interface {
	// CheckProfile applies the rules of an update's text, as
	// UpdateProfile does first: asked before any picture is stored.
	CheckProfile(u *social.ProfileUpdate, newAvatar, newHeader bool) error
	// UpdateProfile returns the pictures it replaced or removed.
	UpdateProfile(ctx context.Context, userID string, u social.ProfileUpdate) ([]*social.ProfileImage, error)
	// ApprovePending approves the pending follow requests of an account
	// just unlocked.
	ApprovePending(ctx context.Context, userID string) error
}

// PictureFiles stores and deletes profile pictures (mediastore.Store).
type PictureFiles interface {
	// SaveProfileImage checks a picture and stores its original and its
	// scaled copies; a refused one (BAD_USER_INPUT) leaves nothing.
	SaveProfileImage(ctx context.Context, userID string, role social.ImageRole, f io.ReaderAt, size int64) (social.ProfileImage, error)
	DeleteProfileImage(ctx context.Context, img *social.ProfileImage) error
}

// ProfileEditor carries out updateProfile: the text through the store,
// the pictures through the files, in an order that leaves nothing half
// done.
type ProfileEditor struct {
	Store ProfileStore
	// Files stores the pictures; nil: the gateway takes none.
	Files PictureFiles
	// URLs addresses the pictures.
	URLs readpath.PictureURLs
	// Budget spends the per-user upload budget, a picture a file; nil:
	// none.
	Budget Limiter
	// Saving is the bound of files being checked and stored at once that
	// posts' files share (Attachments.Saving); nil: none.
	Saving chan struct{}
}

// update changes userID's profile as in says: the text is checked
// first, then the pictures are stored, then the profile written in one
// step; a failure at any point deletes the pictures stored, so a refused
// update changes nothing. The pictures replaced are deleted last.
func (e *ProfileEditor) update(ctx context.Context, userID string, in model.UpdateProfileInput) error {
	u := social.ProfileUpdate{Bio: in.Bio, DisplayName: in.DisplayName, Locked: in.Locked,
		RemoveAvatar: in.RemoveAvatar != nil && *in.RemoveAvatar, RemoveHeader: in.RemoveHeader != nil && *in.RemoveHeader}
	if err := e.Store.CheckProfile(&u, in.Avatar != nil, in.Header != nil); err != nil {
		return err
	}
	saved, err := e.savePictures(ctx, userID, &u, in)
	if err == nil {
		var replaced []*social.ProfileImage
		if replaced, err = e.Store.UpdateProfile(ctx, userID, u); err == nil {
			e.delete(ctx, replaced, "replaced profile pictures")
			if u.Locked != nil && !*u.Locked {
				return e.Store.ApprovePending(ctx, userID)
			}
			return nil
		}
	}
	e.delete(ctx, saved, "the pictures of a profile update not made")
	return err
}

// savePictures stores the new avatar and header of u and returns those
// it stored, also when one fails.
func (e *ProfileEditor) savePictures(ctx context.Context, userID string, u *social.ProfileUpdate, in model.UpdateProfileInput) ([]*social.ProfileImage, error) {
	files := []struct {
		role social.ImageRole
		up   *graphql.Upload
		to   **social.ProfileImage
	}{{social.Avatar, in.Avatar, &u.Avatar}, {social.Header, in.Header, &u.Header}}
	var saved []*social.ProfileImage
	for _, f := range files {
		if f.up == nil {
			continue
		}
		if e.Files == nil {
			return saved, social.Errorf(social.BadUserInput, "this gateway takes no pictures")
		}
		r, ok := f.up.File.(io.ReaderAt)
		if f.up.File == nil {
			return saved, social.Errorf(social.BadUserInput, "the %s file was not sent", f.role)
		}
		if !ok {
			return saved, errors.New("an upload that is not a file")
		}
		if e.Budget != nil {
			if err := e.Budget.Allow(ctx, ratelimit.RuleUploadUser, userID); err != nil {
				return saved, err
			}
		}
		img, err := e.save(ctx, userID, f.role, r, f.up.Size)
		if err != nil {
			return saved, err
		}
		saved = append(saved, &img)
		*f.to = &img
	}
	return saved, nil
}

// save stores one picture, in its turn among the files being saved.
func (e *ProfileEditor) save(ctx context.Context, userID string, role social.ImageRole, r io.ReaderAt, size int64) (social.ProfileImage, error) {
	if e.Saving != nil {
		select {
		case e.Saving <- struct{}{}:
			defer func() { <-e.Saving }()
		case <-ctx.Done():
			return social.ProfileImage{}, &social.Error{Code: social.RateLimited, RetryAfter: time.Second,
				Message: "the server is busy storing other files: retry in a second"}
		}
	}
	return e.Files.SaveProfileImage(ctx, userID, role, r, size)
}

// delete removes the files of pictures no profile names, even when the
// request was cancelled. A failure leaves them behind (docs/security.md,
// "Media files"): logged, and the client keeps its answer.
func (e *ProfileEditor) delete(ctx context.Context, imgs []*social.ProfileImage, what string) {
	if e.Files == nil {
		return // no file was ever stored
	}
	for _, img := range imgs {
		if err := e.Files.DeleteProfileImage(context.WithoutCancel(ctx), img); err != nil {
			gqlerr.Present(ctx, fmt.Errorf("delete %s: %w", what, err))
		}
	}
}

// updateProfile is the updateProfile mutation: the viewer, after the
// change.
func (r *Resolver) updateProfile(ctx context.Context, in model.UpdateProfileInput) (*social.User, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.Profile.update(ctx, v.UserID, in); err != nil {
		return nil, err
	}
	return loadUser(ctx, v.UserID)
}

// pictureURLs addresses profile pictures (nil when the resolver has no
// profile editor: a test's, whose users have no pictures).
func (r *Resolver) pictureURLs() readpath.PictureURLs {
	if r.Profile == nil {
		return nil
	}
	return r.Profile.URLs
}
