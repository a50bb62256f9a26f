// SPDX-License-Identifier: GPL-3.0-or-later
// Object handles that cannot crash the interpreter (%include'd by Tcl/FullMonte.i before the
// classes). A SWIG handle is a command whose name or value encodes a C++ address, so by default a
// deleted object's handle string, a made-up `_1234_p_TetraMesh` or any command name (SWIG runs
// `$name cget -this`) would reach C++ as a pointer. Here:
// - every object Tcl can see is owned by Tcl: constructed, or returned fresh (%newobject), so
//   SWIG's table of owned objects is exactly the set of live objects;
// - every object argument (and `self`) is looked up in that table before use: a deleted or
//   unknown handle is a Tcl error naming the method and argument, never a dangling pointer;
// - `delete_Class $obj` deletes through the object's command (as `rename $obj {}` does), so
//   command and object go together;
// - `Class name -this ADDRESS` (SWIG's adoption of a raw address) is refused.

// Returned pointers: owned by Tcl where the method is %newobject (SWIG's Tcl default ignores it).
// A constructor registers the object as owned and returns the bare address: the class command
// (fmObjectConstructor) makes the one command that owns it. (SWIG's default also made an unowned
// command named by the address, which outlived the object and could be revived with -acquire.)
// Registering also keeps the address visible to the compiler: an address that only left as text
// would let it drop the constructor's stores.
%typemap(out) SWIGTYPE * %{
    if (strncmp("$symname", "new_", 4) == 0) {
        fmRegister(SWIG_as_voidptr($1), $descriptor);
        Tcl_SetObjResult(interp, SWIG_NewPointerObj(SWIG_as_voidptr($1), $descriptor, 0));
    } else
        Tcl_SetObjResult(interp, SWIG_NewInstanceObj(SWIG_as_voidptr($1), $descriptor, $owner));
%}

// `self` may not be NULL (SWIG lets the word NULL through as a null pointer; other object
// arguments are checked by the adapters, naming the method). delete_Class has already deleted
// through the command when it gets here (fmConvertPtr), leaving a null `self` to `delete`.
%typemap(check) SWIGTYPE *self, SWIGTYPE const *self %{
    if (!$1 && strncmp("$symname", "delete_", 7) != 0)
        SWIG_exception_fail(SWIG_ValueError, "in method '$symname': the object is NULL");
%}

%{
#include <string.h>

// Why the last object argument was refused; appended to SWIG's "in method ..., argument N" text.
static const char* fmHandleProblem = 0;

// The live objects are the keys of SWIG's table of owned objects; the value records the class the
// object was created as, so a stale handle whose address now holds an object of another class is
// refused too. (An entry without a class comes from `-acquire` after `-disown`: not usable.)
static void fmRegister(void* p, swig_type_info* type) {
    int isNew = 0;
    Tcl_HashEntry* e = Tcl_CreateHashEntry(SWIG_Tcl_ObjectTable(), (char*)p, &isNew);
    Tcl_SetHashValue(e, (ClientData)type);
}
static Tcl_Obj* fmNewInstanceObj(Tcl_Interp* interp, void* p, swig_type_info* type, int flags) {
    Tcl_Obj* o = SWIG_Tcl_NewInstanceObj(interp, p, type, flags);
    if (p && (flags & SWIG_POINTER_OWN)) fmRegister(p, type);
    return o;
}
#undef SWIG_NewInstanceObj
#define SWIG_NewInstanceObj(thisvalue, type, flags) fmNewInstanceObj(interp, thisvalue, type, flags)

static swig_instance* fmInstanceOf(Tcl_Interp* interp, const char* name) {
    Tcl_CmdInfo info;
    if (!Tcl_GetCommandInfo(interp, name, &info)) return 0;
    if (info.objProc != (Tcl_ObjCmdProc*)SWIG_Tcl_MethodCommand) return 0;
    return (swig_instance*)info.objClientData;
}

static int fmRefuse(const char* problem) {
    fmHandleProblem = problem;
    return SWIG_ERROR;
}

// SWIG_ConvertPtr with a liveness check: the handle (a command name or an address string) must
// name an object Tcl owns now. Never evaluates the argument as a script.
static int fmConvertPtr(Tcl_Interp* interp, Tcl_Obj* oc, void** ptr, swig_type_info* ty, int flags) {
    fmHandleProblem = 0;
    const char* s = Tcl_GetString(oc);
    if (*s == 0 || strcmp(s, "NULL") == 0) return SWIG_Tcl_ConvertPtrFromString(interp, s, ptr, ty, flags);
    swig_instance* inst = fmInstanceOf(interp, s);
    if (inst) s = Tcl_GetString(inst->thisptr);
    if (*s != '_') return fmRefuse("not a FullMonte object");
    void* raw = 0;
    const char* typeName = SWIG_UnpackData(s + 1, &raw, sizeof(void*));
    if (!typeName || !raw) return fmRefuse("not a FullMonte object");
    Tcl_HashEntry* live = Tcl_FindHashEntry(SWIG_Tcl_ObjectTable(), (char*)raw);
    swig_type_info* created = live ? (swig_type_info*)Tcl_GetHashValue(live) : 0;
    if (!created || strcmp(created->name, typeName) != 0)
        return fmRefuse("the object was deleted (or never existed)");
    int res = SWIG_Tcl_ConvertPtrFromString(interp, s, ptr, ty, flags & ~SWIG_POINTER_DISOWN);
    if (!SWIG_IsOK(res)) return fmRefuse("an object of another class");
    if (flags & SWIG_POINTER_DISOWN) {  // delete_Class: delete through the command
        if (!inst) inst = fmInstanceOf(interp, s);
        if (!inst || !inst->destroy) return fmRefuse("delete the object with `rename $obj {}`");
        Tcl_DeleteCommandFromToken(interp, inst->cmdtok);
        *ptr = 0;  // already deleted: the wrapper's `delete` is a no-op
    }
    return res;
}
#undef SWIG_ConvertPtr
#define SWIG_ConvertPtr(oc, ptr, ty, flags) fmConvertPtr(interp, oc, ptr, ty, flags)
#undef SWIG_ConvertInstance
#define SWIG_ConvertInstance(obj, pptr, type, flags) fmConvertPtr(interp, obj, pptr, type, flags)

// The reason is added to errors about an object argument only ("... of type 'Class *'"): one left
// over from an overload check must not end up on an unrelated error.
static void fmSetArgError(Tcl_Interp* interp, int code, const char* msg) {
    SWIG_Tcl_SetErrorMsg(interp, SWIG_Tcl_ErrorType(code), msg);
    if (fmHandleProblem && strstr(msg, " *'")) Tcl_AppendResult(interp, ": ", fmHandleProblem, (char*)NULL);
    fmHandleProblem = 0;
}
#undef SWIG_Error
#define SWIG_Error(code, msg) fmSetArgError(interp, code, msg)

// `set m [Class name]` returns the object's handle (its address string), and scripts call
// `$m method` as with FullMonte's SWIG: the handle is made an alias of the named command, so it
// forwards to the live object and is an "invalid command" error once the object is deleted.
static void fmAliasHandle(Tcl_Interp* interp, const char* name) {
    Tcl_Obj* handle = Tcl_GetObjResult(interp);
    const char* h = Tcl_GetString(handle);
    if (name[0] == '-' || h[0] != '_' || strcmp(h, name) == 0) return;
    Tcl_Command cmd = Tcl_FindCommand(interp, name, NULL, 0);
    if (!cmd) return;
    Tcl_IncrRefCount(handle);
    Tcl_Obj* full = Tcl_NewObj();
    Tcl_IncrRefCount(full);
    Tcl_GetCommandFullName(interp, cmd, full);
    Tcl_CreateAlias(interp, h, interp, Tcl_GetString(full), 0, NULL);
    Tcl_DecrRefCount(full);
    Tcl_SetObjResult(interp, handle);
    Tcl_DecrRefCount(handle);
}

// Class commands: SWIG's constructor, except `-this ADDRESS`, which would let a script adopt any
// address as an object.
static int fmObjectConstructor(ClientData cd, Tcl_Interp* interp, int objc, Tcl_Obj* const objv[]) {
    for (int i = 1; i < objc && i <= 2; ++i) {
        if (strcmp(Tcl_GetString(objv[i]), "-this") == 0) {
            Tcl_SetObjResult(interp, Tcl_NewStringObj("-this is not supported: objects are created by "
                                                      "their class or returned by methods", -1));
            return TCL_ERROR;
        }
    }
    int code = SWIG_Tcl_ObjectConstructor(cd, interp, objc, (Tcl_Obj**)objv);
    if (code == TCL_OK && objc >= 2) fmAliasHandle(interp, Tcl_GetString(objv[1]));
    return code;
}
%}

%init %{
    for (size_t c = 0; swig_commands[c].name; ++c) {
        if (swig_commands[c].wrapper == (swig_wrapper_func)SWIG_Tcl_ObjectConstructor)
            Tcl_CreateObjCommand(interp, swig_commands[c].name, (Tcl_ObjCmdProc*)fmObjectConstructor,
                                 swig_commands[c].clientdata, NULL);
    }
%}
