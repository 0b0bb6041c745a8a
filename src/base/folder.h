/*
** folder.h -- the folders tielab keeps its files in, and making folders.
**
** Where, by the XDG Base Directory specification: $XDG_STATE_HOME (the
** autosaved runs, the REPL's history), $XDG_CACHE_HOME (tokenizers),
** $XDG_CONFIG_HOME (init.lua) and $XDG_DATA_HOME (the user's scripts), each
** with its default under $HOME. The specification says a relative value
** is to be ignored -- it would name another folder from each working
** directory -- so it is, and so is a relative HOME.
**
** The modes, said here once: a folder tielab makes for itself (state,
** cache) holds the user's runs and what was learnt from their corpora, so
** it is the user's alone, FOLDER_PRIVATE. A folder a script asks for
** (lab.mkdir) is made as mkdir(1) makes one, FOLDER_SHARED less the umask.
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
