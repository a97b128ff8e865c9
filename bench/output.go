package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// rootModule is the module whose directory is the repository root.
const rootModule = "github.com/latchkey/latchkey"

// writeFiles writes the report and the JSON where cfg asks and says where
// they went, as paths from the repository root.
func writeFiles(cfg Config, rep *Report, stdout io.Writer) error {
	var wrote []string
	if cfg.Out != "" {
		if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
			return err
		}
		charts, err := writeReport(cfg.Out, rep)
		if err != nil {
			return err
		}
		wrote = append(wrote, fmt.Sprintf("%s (and %d SVG charts beside it)",
			fromRoot(filepath.Join(cfg.Out, "report.md")), charts))
	}
	jsonPath := cfg.JSON
	if jsonPath == "" && cfg.Out != "" {
		jsonPath = filepath.Join(cfg.Out, "results.json")
	}
	if jsonPath != "" {
		if err := writeJSON(jsonPath, rep); err != nil {
			return err
		}
		wrote = append(wrote, fromRoot(jsonPath))
	}
	if len(wrote) > 0 {
		fmt.Fprintf(stdout, "\nWrote %s\n", strings.Join(wrote, " and "))
	}
	return nil
}

func writeJSON(path string, rep *Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// fromRoot returns path relative to the repository root, the directory of
// rootModule's go.mod above the working directory, so that a run started
// as "go -C bench run ." says bench/out/report.md. A path outside the
// repository, or any path when no root is found, is returned absolute.
func fromRoot(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	root := repoRoot()
	if root == "" {
		return abs
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return abs
	}
	return rel
}

// repoRoot returns the nearest directory at or above the working directory
// whose go.mod declares rootModule, or "".
func repoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modulePath(b) == rootModule {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// modulePath returns the path of a go.mod's module directive.
func modulePath(gomod []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}
