package builtin

import (
	"path"
	"strings"
)

// binaryExtensions are the file name extensions of binary formats: compiled
// code, archives and compressed files, images, audio and video, office
// documents, fonts and databases. They refuse nothing by themselves — a
// file is judged by its content, so a text file named .bmp, .tiff or .avif
// is read — but they make read look at all of a file, not only its first
// 8 KiB: a file so named is read only if every byte of it is text (no NUL
// byte, valid UTF-8). read_file always looks at all of a file.
var binaryExtensions = map[string]bool{
	// compiled code and objects
	".wasm": true, ".o": true, ".a": true, ".so": true, ".dylib": true, ".dll": true, ".exe": true,
	".obj": true, ".lib": true, ".class": true, ".pyc": true, ".pyo": true, ".elc": true, ".beam": true,
	// archives and compressed files
	".zip": true, ".tar": true, ".gz": true, ".tgz": true, ".bz2": true, ".xz": true, ".zst": true,
	".7z": true, ".rar": true, ".jar": true, ".war": true, ".whl": true, ".deb": true, ".rpm": true,
	".iso": true, ".dmg": true, ".lz4": true,
	// images
	".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true, ".bmp": true, ".ico": true,
	".tif": true, ".tiff": true, ".avif": true, ".heic": true, ".psd": true,
	// audio and video
	".mp3": true, ".wav": true, ".flac": true, ".ogg": true, ".mp4": true, ".mov": true, ".avi": true,
	".mkv": true, ".webm": true,
	// documents, fonts, data
	".pdf": true, ".doc": true, ".docx": true, ".xls": true, ".xlsx": true, ".ppt": true, ".pptx": true,
	".odt": true, ".ods": true, ".odp": true, ".ttf": true, ".otf": true, ".woff": true, ".woff2": true,
	".sqlite": true, ".db": true, ".bin": true,
}

// binaryByName reports whether name's extension (any case) is that of a
// binary format.
func binaryByName(name string) bool {
	return binaryExtensions[strings.ToLower(path.Ext(strings.ReplaceAll(name, `\`, "/")))]
}
