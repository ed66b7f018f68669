package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
)

// skillDirs are where skills live under a location, searched in this order:
// a skill is a directory holding SKILL.md, named by the directory; the first
// directory holding a name wins.
var skillDirs = [...]string{".stepgate/skills", ".agents/skills"}

// SkillMaxFiles bounds the files a loaded skill lists.
const SkillMaxFiles = 50

// SkillInput is the input of skill.
type SkillInput struct {
	Name string `json:"name" jsonschema:"description=The skill's name (its directory under .stepgate/skills or .agents/skills),minLength=1"`
}

// Skill builds skill: it loads a skill's SKILL.md from the location and lists
// the other files of its directory. An unknown name is an error listing the
// skills there are. Permission: skill on the name ("always" saves the name).
func Skill() (*executor.Tool, error) {
	return executor.New("skill",
		"Load a skill: its SKILL.md instructions and the list of files that come with it. Skills live in the workspace under .stepgate/skills/NAME/ or .agents/skills/NAME/.",
		loadSkill, executor.WithEffect(descriptor.ReadOnly),
		executor.WithRequests(func(_ executor.Call, in SkillInput) ([]descriptor.Request, error) {
			if !validSkillName(in.Name) {
				return nil, fmt.Errorf("skill name %q must be one directory name", in.Name)
			}
			return []descriptor.Request{{Action: "skill", Resources: []string{in.Name}, Save: []string{in.Name}}}, nil
		}))
}

func validSkillName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, `/\`) && fs.ValidPath(name)
}

func loadSkill(_ context.Context, c executor.Call, in SkillInput) (string, error) {
	root, err := os.OpenRoot(c.Location)
	if err != nil {
		return "", fmt.Errorf("open the workspace: %w", err)
	}
	defer root.Close()
	fsys := root.FS() // confined to the location: symlinks cannot lead out
	for _, dir := range skillDirs {
		base := path.Join(dir, in.Name)
		body, err := readSkill(root, path.Join(base, "SKILL.md"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("read skill %s: %w", in.Name, err)
		}
		files := skillFiles(fsys, base)
		var b strings.Builder
		fmt.Fprintf(&b, "<skill name=%q dir=%q>\n%s\n", in.Name, base, strings.TrimRight(string(body), "\n"))
		if len(files) > 0 {
			b.WriteString("\nFiles:\n")
			for _, f := range files {
				fmt.Fprintf(&b, "- %s\n", f)
			}
		}
		b.WriteString("</skill>")
		return b.String(), nil
	}
	names := availableSkills(root)
	if len(names) == 0 {
		return "", fmt.Errorf("unknown skill %q: there are no skills (none of %s holds NAME/SKILL.md)", in.Name, strings.Join(skillDirs[:], ", "))
	}
	return "", fmt.Errorf("unknown skill %q; available: %s", in.Name, strings.Join(names, ", "))
}

// skillFiles lists the files of a skill's directory other than SKILL.md,
// relative to the location, at most SkillMaxFiles.
func skillFiles(fsys fs.FS, base string) []string {
	var files []string
	_ = fs.WalkDir(fsys, base, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == path.Join(base, "SKILL.md") {
			return nil
		}
		if len(files) == SkillMaxFiles {
			files = append(files, fmt.Sprintf("… (more files under %s)", base))
			return fs.SkipAll
		}
		files = append(files, p)
		return nil
	})
	return files
}

// readSkill is the text of a skill's SKILL.md: a regular file (opened
// without blocking, so a named pipe there is refused, not waited on) of at
// most MaxReadFileBytes, as read_file reads.
func readSkill(root *os.Root, name string) ([]byte, error) {
	f, err := openRegular(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxReadFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxReadFileBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes, the most a skill's SKILL.md may hold", name, MaxReadFileBytes)
	}
	return b, nil
}

// availableSkills are the names of every skill under the location, sorted.
// A skills directory is opened without blocking and listed only if it is
// one (a named pipe in its place lists nothing).
func availableSkills(root *os.Root) []string {
	var names []string
	for _, dir := range skillDirs {
		entries, _ := readDir(root, dir)
		for _, e := range entries {
			if fi, err := root.Stat(path.Join(dir, e.Name(), "SKILL.md")); err == nil && fi.Mode().IsRegular() && !slices.Contains(names, e.Name()) {
				names = append(names, e.Name())
			}
		}
	}
	slices.Sort(names)
	return names
}

// readDir lists the directory name of root, opened without blocking; it
// refuses anything that is not a directory then.
func readDir(root *os.Root, name string) ([]os.DirEntry, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", name)
	}
	return f.ReadDir(-1)
}
