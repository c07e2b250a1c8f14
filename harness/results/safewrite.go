package results

import (
	"fmt"
	"os"
	"path/filepath"
)

// Outputs go into a results folder someone else may have made, so no
// write follows a symbolic link planted in it: a file is written new beside
// its name and renamed over it, which replaces a link there instead of
// writing through it, and a folder granite makes inside one (a report's)
// must be a folder itself (RealDir). The folder a user names is theirs:
// a link to a larger disk is followed.

// RealDir refuses a folder that is a symbolic link or no folder at all,
// saying what to do.
func RealDir(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case err != nil:
		return err
	case fi.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link: granite writes its outputs only into a folder itself, not through a link; remove the link or choose another folder", dir)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a folder", dir)
	}
	return nil
}

// WriteFile writes data as dir/name, synced, without following a link
// at name: the data goes to a new file in dir that is renamed over name.
// When that fails, what stood at name stands and no temporary file is
// left.
func WriteFile(dir, name string, data []byte) error {
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}
