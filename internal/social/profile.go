package social

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// The rules of a profile: its display name and its pictures.

// MaxDisplayNameLen is the longest display name, in characters (code
// points) after normalisation.
const MaxDisplayNameLen = 50

// ValidateDisplayName normalises a display name (Unicode NFC, so that
// one name is stored one way whatever the client composed) and checks it
// with the rules of text (CleanText: no control, bidirectional override
// or isolate characters; invisible-only text is empty), on one line: a
// newline or a tab is refused too. Empty removes the display name.
func ValidateDisplayName(s string) (string, error) {
	if strings.ContainsAny(s, "\n\t") {
		return "", Errorf(BadUserInput, "displayName must be one line")
	}
	return CleanText(norm.NFC.String(s), "displayName", 0, MaxDisplayNameLen)
}

// ImageRole names the picture of a profile: its avatar or its header.
type ImageRole string

// The pictures of a profile.
const (
	Avatar ImageRole = "avatar"
	Header ImageRole = "header"
)

// Sizes are the widths, in pixels, of the scaled copies kept of a
// profile's picture, smallest first: an avatar is a square of each size,
// a header at most each size wide. A source smaller than a size gives a
// copy of its own size (never enlarged).
func (r ImageRole) Sizes() []int {
	if r == Avatar {
		return []int{48, 96, 400}
	}
	return []int{600, 1500}
}

// ProfileImage is a profile's avatar or header: the cleaned original the
// user sent, and the scaled copies served.
type ProfileImage struct {
	// ID names the upload (random): a new picture has a new ID, so its
	// addresses change and caches never show the old one under them.
	ID       string
	Original ImageFile
	// Versions are the scaled copies, smallest first, one per size of the
	// role (ImageRole.Sizes).
	Versions []ImageFile
}

// ImageFile is one stored file of a profile picture.
type ImageFile struct {
	// Size is the role's size the copy was made for (0: the original).
	Size int
	// MIME is sniffed (the original) or chosen by the encoder (copies).
	MIME          string
	Bytes         int64
	Width, Height int
	// Key names the file in the blob store.
	Key string
}

// Version is the smallest copy at least want pixels wide, or the largest
// when none is; want 0 asks for the largest.
func (p *ProfileImage) Version(want int) ImageFile {
	if len(p.Versions) == 0 {
		return p.Original
	}
	for _, v := range p.Versions {
		if want > 0 && v.Size >= want {
			return v
		}
	}
	return p.Versions[len(p.Versions)-1]
}

// Keys are the blob keys of every file of the picture.
func (p *ProfileImage) Keys() []string {
	if p == nil {
		return nil
	}
	keys := []string{p.Original.Key}
	for _, v := range p.Versions {
		keys = append(keys, v.Key)
	}
	return keys
}

// ProfileUpdate is what updateProfile changes: nil fields are left as
// they are. A picture set or removed is one of the pictures' changes.
type ProfileUpdate struct {
	Bio, DisplayName *string
	// Avatar and Header are new pictures, already stored.
	Avatar, Header *ProfileImage
	// RemoveAvatar and RemoveHeader take the current one away.
	RemoveAvatar, RemoveHeader bool
	// Locked, when set, locks (true) or unlocks the account; unlocking
	// approves every pending follow request.
	Locked *bool
}

// CheckProfileUpdate applies the rules of a profile's text, normalising
// u's bio and display name, before any picture is stored: a refused
// update stores nothing. Setting and removing one picture at once is
// refused.
func CheckProfileUpdate(u *ProfileUpdate, newAvatar, newHeader bool) error {
	if u.Bio != nil {
		bio, err := ValidateBio(*u.Bio)
		if err != nil {
			return err
		}
		u.Bio = &bio
	}
	if u.DisplayName != nil {
		name, err := ValidateDisplayName(*u.DisplayName)
		if err != nil {
			return err
		}
		u.DisplayName = &name
	}
	if newAvatar && u.RemoveAvatar {
		return Errorf(BadUserInput, "avatar and removeAvatar together: send one of them")
	}
	if newHeader && u.RemoveHeader {
		return Errorf(BadUserInput, "header and removeHeader together: send one of them")
	}
	return nil
}
