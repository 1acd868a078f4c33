package media

import (
	"encoding/binary"
	"io"
)

// pngKept are the PNG chunks a stored copy keeps: the critical ones and
// those that change how the pixels look (transparency, gamma,
// chromaticities, the colour space and its profile). Text (tEXt, zTXt,
// iTXt, where XMP lives), eXIf, time, physical size, animation and every
// private or unknown chunk are left out.
var pngKept = map[string]bool{
	"IHDR": true, "PLTE": true, "IDAT": true, "IEND": true,
	"tRNS": true, "gAMA": true, "cHRM": true, "sRGB": true, "iCCP": true,
}

// cleanPNG copies the signature and the kept chunks whole (their CRCs
// stay valid), up to IEND; what follows IEND is left out.
func cleanPNG(w io.Writer, r io.ReaderAt, size int64) error {
	if err := copyRange(w, r, 0, 8); err != nil {
		return err
	}
	var hdr [8]byte
	for off := int64(8); off+12 <= size; {
		if _, err := r.ReadAt(hdr[:], off); err != nil {
			return badImage(mimePNG)
		}
		l := binary.BigEndian.Uint32(hdr[:4])
		n := 12 + int64(l) // length, type, data, CRC
		if l > 1<<31-1 || off+n > size {
			return badImage(mimePNG)
		}
		typ := string(hdr[4:8])
		if pngKept[typ] {
			if err := copyRange(w, r, off, n); err != nil {
				return err
			}
		}
		if typ == "IEND" {
			return nil
		}
		off += n
	}
	return badImage(mimePNG)
}
