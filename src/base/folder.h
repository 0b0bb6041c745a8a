/*
** folder.h -- the folders tielab keeps its files in, and making folders.
** Where, by the XDG Base Directory specification, and the modes it makes
** them with: docs/architecture.md, 'The folders tielab keeps'.
*/
#ifndef TIELAB_BASE_FOLDER_H
#define TIELAB_BASE_FOLDER_H

#include <stddef.h>
#include <sys/types.h>

#include "base/err.h"

enum { FOLDER_PRIVATE = 0700, FOLDER_SHARED = 0777 };

typedef enum { FOLDER_STATE, FOLDER_CACHE, FOLDER_CONFIG, FOLDER_DATA } FolderKind;

/* "$XDG_<KIND>_HOME/<leaf>", or without it (unset, empty or relative) its
** default under $HOME ("$HOME/.local/state/<leaf>"), into 'buf'. Returns
** its length, or -1 with 'err' (may be NULL) saying why ("neither
** XDG_STATE_HOME nor HOME is set to an absolute path", "state folder path
** too long"). */
int folder_xdg(FolderKind kind, const char *leaf, char *buf, size_t cap, Err *err);

/* Make the folder 'path' unless one is there already (made by another
** process meanwhile too). 0, or -1 with errno: ENOTDIR when something that
** is no folder is in its place. */
int folder_make(const char *path, mode_t mode);

/* 'path' and each missing folder above it, as mkdir -p. 0, or -1 with
** 'err' (may be NULL): "cannot create PATH: why". */
int folder_make_all(const char *path, mode_t mode, Err *err);

#endif
