#ifndef GRAPHKIT_ENGINE_H
#define GRAPHKIT_ENGINE_H
/* GraphKit's own side of loading a plugin; not part of what a plugin includes. */

/* How a library opened with dlopen reaches GraphKit's engine, against this process's. */
typedef enum GraphKitEngineReach {
    GRAPHKIT_ENGINE_NONE = 0,   /* it links no engine (a library of C, say): nothing to share */
    GRAPHKIT_ENGINE_SAME = 1,   /* this process's: one engine */
    GRAPHKIT_ENGINE_OTHER = 2,  /* a copy of its own, or one this process's code does not use */
} GraphKitEngineReach;

/* Compares where one of the engine's symbols resolves from `handle` (the library itself first,
 * then what it needs) with where this process's engine has it. `image`, when not NULL, is set to
 * the file that holds this process's engine (a shared library, or the program itself), or NULL. */
GraphKitEngineReach graphkit_engine_reach(void *handle, const char **image);

#endif
