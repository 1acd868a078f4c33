package mediastore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"strconv"

	"gocloud.dev/blob"

	"github.com/socialgw/gateway/internal/media"
	"github.com/socialgw/gateway/internal/social"
)

// Profile pictures (avatars and headers) are kept beside posts' files,
// under profile/<user>/<picture id>/<size> ("orig" for the original), a
// prefix the media sweep does not list: no post names them, the profile
// does. Their bounds are tighter than a post's files: a picture is
// decoded whole into memory to be scaled.
const profilePrefix = "profile/"

// Bounds of a profile picture when the Store leaves them at zero.
const (
	// DefaultProfileMaxBytes bounds the file sent.
	DefaultProfileMaxBytes = 8 << 20
	// DefaultProfileMaxPixels bounds its canvas: 16 megapixels decode
	// into 64 MiB.
	DefaultProfileMaxPixels = 16_000_000
)

// ProfileBounds are the bounds of profile pictures.
type ProfileBounds struct {
	// MaxBytes bounds the file sent (DefaultProfileMaxBytes when 0),
	// MaxPixels its canvas (DefaultProfileMaxPixels when 0).
	MaxBytes, MaxPixels int64
}

func (b ProfileBounds) withDefaults() ProfileBounds {
	if b.MaxBytes <= 0 {
		b.MaxBytes = DefaultProfileMaxBytes
	}
	if b.MaxPixels <= 0 {
		b.MaxPixels = DefaultProfileMaxPixels
	}
	return b
}

// SaveProfileImage checks a picture of size bytes that userID sent for
// its role, and stores it: the original as Clean writes it (sniffed,
// without metadata, decoded whole) and a scaled copy for each of the
// role's sizes (an avatar cropped to its centre square; a header fitted
// to the width). A refused file (not an image, too large, damaged) is
// BAD_USER_INPUT; nothing of a picture that fails is left in the bucket.
func (s *Store) SaveProfileImage(ctx context.Context, userID string, role social.ImageRole, f io.ReaderAt, size int64) (img social.ProfileImage, err error) {
	if !social.IsID(userID) {
		return img, fmt.Errorf("store profile picture: bad user id %q", userID)
	}
	b := s.Profile.withDefaults()
	if size > b.MaxBytes {
		return img, social.Errorf(social.BadUserInput, "the %s is %d bytes, more than the %d allowed", role, size, b.MaxBytes)
	}
	info, err := media.Inspect(f, size, b.MaxPixels)
	if err != nil {
		return img, err
	}
	if info.Kind != social.Image {
		return img, social.Errorf(social.BadUserInput, "the %s is not an image (JPEG, PNG, WebP, GIF)", role)
	}
	img.ID = newID()
	var written []string
	defer func() {
		if err != nil {
			// The request may be over: the files must go all the same.
			_ = s.Delete(context.WithoutCancel(ctx), written)
		}
	}()
	base := profilePrefix + userID + "/" + img.ID + "/"
	var clean bytes.Buffer
	img.Original = social.ImageFile{MIME: info.MIME, Width: info.Width, Height: info.Height, Key: base + "orig"}
	written = append(written, img.Original.Key)
	err = s.write(ctx, img.Original.Key, info.MIME, func(w io.Writer) (int64, error) {
		return media.Clean(io.MultiWriter(w, &clean), f, size, info, b.MaxPixels)
	})
	if err != nil {
		return img, err
	}
	img.Original.Bytes = int64(clean.Len())
	still, err := media.Still(&clean, info)
	if err != nil {
		return img, err
	}
	for _, side := range role.Sizes() {
		v, err := s.saveCopy(ctx, scaled(role, still, side), base+strconv.Itoa(side))
		written = append(written, v.Key)
		if err != nil {
			return img, err
		}
		v.Size = side
		img.Versions = append(img.Versions, v)
	}
	return img, nil
}

// scaled is the copy of a role's picture for one size.
func scaled(role social.ImageRole, m image.Image, side int) *image.RGBA {
	if role == social.Avatar {
		return media.Square(m, side)
	}
	return media.FitWidth(m, side)
}

// saveCopy encodes a scaled copy and stores it under key.
func (s *Store) saveCopy(ctx context.Context, m *image.RGBA, key string) (social.ImageFile, error) {
	f := social.ImageFile{Width: m.Bounds().Dx(), Height: m.Bounds().Dy(), Key: key}
	data, mime, err := media.EncodeBytes(m)
	if err != nil {
		return f, err
	}
	f.MIME, f.Bytes = mime, int64(len(data))
	return f, s.write(ctx, key, mime, func(w io.Writer) (int64, error) {
		n, err := w.Write(data)
		return int64(n), err
	})
}

// write stores what fill writes under key; a fill that fails leaves no
// object (cancelling the writer's context is how gocloud aborts it).
func (s *Store) write(ctx context.Context, key, mime string, fill func(io.Writer) (int64, error)) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.bucket.NewWriter(wctx, key, &blob.WriterOptions{ContentType: mime})
	if err != nil {
		return fmt.Errorf("store profile picture: %w", err)
	}
	if _, err := fill(w); err != nil {
		cancel()
		_ = w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("store profile picture: %w", err)
	}
	return nil
}

// DeleteProfileImage removes every file of a picture (nil: nothing); a
// file already gone is not an error.
func (s *Store) DeleteProfileImage(ctx context.Context, img *social.ProfileImage) error {
	return s.Delete(ctx, img.Keys())
}

// DeleteProfileFiles removes every profile picture file of a user,
// current or left behind (a request that died between storing a picture
// and writing the profile): what deleting an account calls.
func (s *Store) DeleteProfileFiles(ctx context.Context, userID string) error {
	if !social.IsID(userID) {
		return fmt.Errorf("delete profile pictures: bad user id %q", userID)
	}
	keys, err := s.ProfileFiles(ctx, userID)
	if err != nil {
		return err
	}
	return s.Delete(ctx, keys)
}

// ProfileFiles lists the keys of a user's profile picture files (every
// user's for "").
func (s *Store) ProfileFiles(ctx context.Context, userID string) ([]string, error) {
	prefix := profilePrefix
	if userID != "" {
		prefix += userID + "/"
	}
	var keys []string
	it := s.bucket.List(&blob.ListOptions{Prefix: prefix})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return keys, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list profile pictures: %w", err)
		}
		keys = append(keys, o.Key)
	}
}
