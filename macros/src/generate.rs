//! Phase 3: the typed function, its `call` constructor and its `SCRIPT`.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned as _;
use syn::{Ident, Type};

use crate::check::{CheckedLibrary, CheckedScript};
use crate::contract;
use crate::parse::{
    CONNECTION_PARAM, Declaration, FunctionSignature, LibraryDeclaration, ModuleShell,
};
use redis_script_analysis as lua;

/// The full expansion for a script that passed every check.
pub fn script_function(declaration: &Declaration, script: &CheckedScript) -> TokenStream {
    typed_call(declaration, script, CallKind::Script)
}

/// What a typed call runs.
#[derive(Clone, Copy)]
enum CallKind<'a> {
    /// An `EVAL` script of its own.
    Script,
    /// A function of the library the module declares (its `LIBRARY`).
    Function {
        registered_name: &'a str,
        /// The name of its marked twin, which `FCALL` calls.
        called_as: &'a str,
        library: &'a CheckedLibrary,
    },
}

/// The typed function, its companion and the compile-time checks of a
/// script or of one library function.
fn typed_call(
    declaration: &Declaration,
    script: &CheckedScript,
    kind: CallKind<'_>,
) -> TokenStream {
    let signature = &declaration.signature;
    let name = signature.ident.to_string();
    let path = declaration.options.path.value();
    let CheckedScript {
        absolute_path,
        sha1,
        read_only,
        allow_cross_slot_keys,
        header,
        contract,
        json,
        notes,
        returns,
        error_codes,
        declared_commands_path,
        sent_source,
        exactly_once,
        key_prefixes,
    } = script;
    let rebuild_triggers = rebuild_triggers(declared_commands_path.as_deref(), absolute_path);
    let warning_site =
        contract::WarningSite::new(declaration.options.path.span(), &signature.attrs);
    let warnings = warning_site.warnings(notes);
    // A `const` item cannot name the function's generic parameters, so the
    // contract of a generic declaration is checked when it is decoded only.
    let checks_contract = signature.generics.params.is_empty();
    let contract_assertions = if checks_contract {
        let span = declaration.options.path.span();
        let assertions = contract::assertions(
            contract,
            &signature.reply,
            declaration.options.errors.as_ref(),
            span,
        );
        let unreturned =
            contract::unreturned_variant_warning(returns, &signature.reply, &path, &warning_site);
        let unraised = declaration.options.errors.as_ref().map(|errors| {
            contract::unraised_code_warning(error_codes, errors, &path, &warning_site)
        });
        let json = crate::json_contract::assertions(json, span);
        quote! { #assertions #json #unreturned #unraised }
    } else {
        TokenStream::new()
    };
    let doc = match kind {
        CallKind::Script => script_doc(declaration, script, header),
        CallKind::Function { library, .. } => function_doc(declaration, script, library),
    };
    let private = crate::private();
    let (script_doc, script_expr) = match kind {
        CallKind::Script if *exactly_once => {
            let settings = exactly_once_settings(declaration);
            (
                "The embedded script, wrapped to run at most once per call id: its source, SHA1 and the facts checked at compile time.",
                quote! {
                    #private::with_exactly_once(
                        #private::new_script(
                            #name,
                            #path,
                            #sent_source,
                            #sha1,
                            false,
                            #allow_cross_slot_keys,
                        ),
                        #settings,
                    )
                },
            )
        }
        CallKind::Script => (
            "The embedded script: its source, SHA1 and the facts checked at compile time.",
            quote! {
                #private::new_script(
                    #name,
                    #path,
                    #sent_source,
                    #sha1,
                    #read_only,
                    #allow_cross_slot_keys,
                )
            },
        ),
        CallKind::Function {
            registered_name,
            called_as,
            ..
        } => (
            "The library function this calls: its name, its library and the facts checked at compile time.",
            quote! {
                #private::new_function(
                    &LIBRARY,
                    #registered_name,
                    #called_as,
                    #read_only,
                    #allow_cross_slot_keys,
                )
            },
        ),
    };
    // The KEYS elements the script appends to: each call checks their hash
    // tags (arguments declared `#[key_prefix]` are checked as pushed).
    let script_expr = if key_prefixes.keys.is_empty() && !key_prefixes.every_key {
        script_expr
    } else {
        let positions = key_prefixes.keys.iter();
        let every_key = key_prefixes.every_key;
        quote! { #private::with_key_prefixes(#script_expr, &[#(#positions),*], #every_key) }
    };
    let script_expr = match declaration.options.read_from {
        Some((read_from, _)) => {
            let variant = Ident::new(read_from.variant(), Span::call_site());
            quote! { #private::with_read_from(#script_expr, #private::ReadFrom::#variant) }
        }
        None => script_expr,
    };
    let script_const = quote! {
        #[doc = #script_doc]
        pub const SCRIPT: #private::Script = #script_expr;
    };
    let argument_count = signature.arg_params().len();
    let key_count = signature.key_params().len();
    // Mixed-site hygiene: these locals never clash with parameter names.
    let keys = Ident::new("keys", Span::mixed_site());
    let call = Ident::new("call", Span::mixed_site());
    // Each value goes through a probe spanned on its declared type, so a
    // type redis-rs cannot encode is reported there, in the library's words.
    let key_pushes: Vec<TokenStream> = signature
        .key_params()
        .iter()
        .map(|param| {
            let ident = &param.ident;
            quote_spanned! {param.ty.span()=>
                #keys.push(#private::Probe::of(&#ident).key(&#ident));
            }
        })
        .collect();
    let argument_pushes: Vec<TokenStream> = signature
        .arg_params()
        .iter()
        .enumerate()
        .map(|(index, param)| {
            let ident = &param.ident;
            if param.key_prefix.is_some() {
                let position = index + 1;
                quote_spanned! {param.ty.span()=>
                    #private::push_key_prefix(&mut #call, #private::Probe::of(&#ident).argument(&#ident), #position);
                }
            } else {
                quote_spanned! {param.ty.span()=>
                    #private::push_argument(&mut #call, #private::Probe::of(&#ident).argument(&#ident));
                }
            }
        })
        .collect();
    let reply_type = &signature.reply;
    let call_body = |start: TokenStream| {
        quote! {
            use #private::{Encodable as _, Unencodable as _, KnownShape as _, UnknownShape as _};
            let mut #keys = #private::Keys::for_call(#key_count, #argument_count);
            #( #key_pushes )*
            let mut #call = #start;
            #private::Probe::<#reply_type>::new().attach_shape(&mut #call);
            #( #argument_pushes )*
            #call
        }
    };
    let call_id = call_id_ident();
    let call_with_id_body = exactly_once.then(|| {
        call_body(quote! {
            #private::start_call_with_id(&Self::SCRIPT, #keys, #call_id.into())
        })
    });
    let call_body = call_body(quote! {
        #private::start_call(&Self::SCRIPT, #keys)
    });
    let ident = &signature.ident;
    let connection = connection_ident();
    let params = signature.params.iter().map(|param| &param.ident);
    let reply = &signature.reply;
    // The contract's `ReplyShape` bound already reports a reply type that
    // does not decode, with the same fix.
    // A script that replies with JSON text: a type that does not decode
    // is refused with the fix, `Json<T>`, rather than the reply-shape
    // bound's `ScriptReply`.
    let replies_json = returns.iter().any(|site| site.encoded.is_some());
    let probe = if replies_json {
        quote_spanned!(reply.span()=> checked_json)
    } else if checks_contract && contract::need_reply_shape(contract) {
        quote_spanned!(reply.span()=> checked_by_shape)
    } else {
        quote_spanned!(reply.span()=> checked)
    };
    let decoded_call = quote_spanned! {reply.span()=>
        #private::Probe::<#reply>::new().#probe().call(#ident::call(#(#params),*))
    };
    let function_body = quote! {
        use #private::{Decodable as _, Undecodable as _};
        #decoded_call.invoke(#connection).await
    };
    let parts = Expansion {
        path: &path,
        error_type: declaration.options.errors.as_ref(),
        doc: Some(doc),
        script_const,
        compile_time_checks: quote! { #contract_assertions #warnings #rebuild_triggers },
        call_body,
        call_with_id_body,
        function_body,
        companion: true,
    };
    emit(signature, parts)
}

/// `exactly_once(…)`'s settings as the runtime's `ExactlyOnce` constant
/// (`None` for a default).
fn exactly_once_settings(declaration: &Declaration) -> TokenStream {
    let private = crate::private();
    let once = declaration.options.exactly_once.as_ref();
    let some = |value: Option<TokenStream>| match value {
        Some(value) => quote! { ::core::option::Option::Some(#value) },
        None => quote! { ::core::option::Option::None },
    };
    let prefix = some(
        once.and_then(|once| once.prefix.as_ref())
            .map(|prefix| quote! { #prefix }),
    );
    let ttl_ms = some(once.and_then(|once| once.ttl_secs).map(|seconds| {
        let milliseconds = seconds.saturating_mul(1000);
        quote! { #milliseconds }
    }));
    let retries = some(
        once.and_then(|once| once.retries)
            .map(|retries| quote! { #retries }),
    );
    quote! { #private::exactly_once(#prefix, #ttl_ms, #retries) }
}

/// Stable Rust gives procedural macros no way to declare what they read.
/// `option_env!` makes rustc record the target, declared-commands and
/// deny-warnings variables as dependencies of the crate, so Cargo rebuilds it when they
/// change (also through `.cargo/config.toml` `[env]`); `include_bytes!`
/// and `include_str!` do the same for the declared-commands file and the
/// `.lua` file.
fn rebuild_triggers(declared_commands_path: Option<&str>, lua_path: &str) -> TokenStream {
    let target = crate::check::TARGET_VARIABLE;
    let commands = crate::check::COMMANDS_VARIABLE;
    let deny = crate::check::DENY_WARNINGS_VARIABLE;
    let file = declared_commands_path.map(|path| {
        quote! { const _: &[u8] = ::core::include_bytes!(#path); }
    });
    quote! {
        const _: ::core::option::Option<&str> = ::core::option_env!(#target);
        const _: ::core::option::Option<&str> = ::core::option_env!(#commands);
        const _: ::core::option::Option<&str> = ::core::option_env!(#deny);
        // The source is embedded as sent (wrapped), not included.
        const _: &str = ::core::include_str!(#lua_path);
        #file
    }
}

/// Rustdoc for the generated function: which parameter goes where, what the
/// script's header says about it, and the facts checked at compile time.
fn script_doc(declaration: &Declaration, script: &CheckedScript, header: &lua::Header) -> String {
    let signature = &declaration.signature;
    let path = declaration.options.path.value();
    let mut doc = String::new();
    let has_user_doc = signature
        .attrs
        .iter()
        .any(|attr| attr.path().is_ident("doc"));
    let description: Vec<&str> = header
        .doc
        .iter()
        .map(String::as_str)
        .filter(|line| !line.starts_with("KEYS[") && !line.starts_with("ARGV["))
        .collect();
    if !has_user_doc {
        for line in description.iter().take_while(|line| !line.is_empty()) {
            doc.push_str(line);
            doc.push('\n');
        }
    }
    doc.push_str(&format!(
        "\n# Script\n\nRuns `{path}` with `{}` (SHA1 `{}`), checked at compile time.\n\n| parameter | sent as | meaning (from the script's header) |\n| --- | --- | --- |\n",
        if script.read_only { "EVALSHA_RO" } else { "EVALSHA" },
        script.sha1,
    ));
    if script.exactly_once {
        doc.push_str("\nExactly once: each call carries a call id (`call_with_id` takes yours); the first execution's reply is recorded under it, and a call sent again with the same id returns that reply without running the script again. The record is sent as one more key after the script's keys, its TTL as one more argument before the script's arguments.\n\n");
    }
    let rows = signature
        .key_params()
        .iter()
        .enumerate()
        .map(|(index, param)| (param, "KEYS", index + 1, &header.keys))
        .chain(
            signature
                .arg_params()
                .iter()
                .enumerate()
                .map(|(index, param)| (param, "ARGV", index + 1, &header.args)),
        );
    for (param, table, index, documented) in rows {
        let sent_as = if param.variadic {
            format!("`{table}[{index}..]`")
        } else {
            format!("`{table}[{index}]`")
        };
        let meaning = documented
            .iter()
            .find(|entry| entry.index == index)
            .map_or("", |entry| entry.text.as_str());
        doc.push_str(&format!(
            "| `{}` | {sent_as} | {} |\n",
            param.ident,
            meaning.replace('|', "\\|")
        ));
    }
    if has_user_doc && !description.is_empty() {
        doc.push_str("\nScript header:\n\n```text\n");
        for line in &description {
            doc.push_str(line);
            doc.push('\n');
        }
        doc.push_str("```\n");
    }
    doc
}

/// The declared items with unreachable bodies, emitted next to the compile
/// errors so that call sites still resolve and type-check.
pub fn unreachable_function(
    signature: &FunctionSignature,
    error_type: Option<&Type>,
    exactly_once: bool,
) -> TokenStream {
    stand_in(signature, error_type, exactly_once, true)
}

/// The function alone, with an unreachable body: what stands in for a
/// declaration inside an `impl` block, which cannot hold its companion type.
pub fn unreachable_associated_function(
    signature: &FunctionSignature,
    error_type: Option<&Type>,
) -> TokenStream {
    stand_in(signature, error_type, false, false)
}

fn stand_in(
    signature: &FunctionSignature,
    error_type: Option<&Type>,
    exactly_once: bool,
    companion: bool,
) -> TokenStream {
    let unreachable = quote! { ::core::unreachable!("#[redis_script] failed to compile") };
    let parts = Expansion {
        path: "",
        error_type,
        doc: None,
        script_const: TokenStream::new(),
        compile_time_checks: TokenStream::new(),
        call_body: unreachable.clone(),
        call_with_id_body: exactly_once.then(|| unreachable.clone()),
        function_body: unreachable,
        companion,
    };
    emit(signature, parts)
}

/// The pieces that differ between a checked script and the fallback.
struct Expansion<'a> {
    path: &'a str,
    /// `errors = E`: the function fails with `Failure<E>`.
    error_type: Option<&'a Type>,
    /// Generated rustdoc appended to the user's.
    doc: Option<String>,
    script_const: TokenStream,
    /// `const` items proving the reply contract, and warnings.
    compile_time_checks: TokenStream,
    call_body: TokenStream,
    /// For an `exactly_once` script: the body of `call_with_id`, whose id
    /// parameter is [`call_id_ident`].
    call_with_id_body: Option<TokenStream>,
    function_body: TokenStream,
    /// Emit the companion type (`name::call`, `name::SCRIPT`) and the
    /// compile-time checks next to the function.
    companion: bool,
}

fn connection_ident() -> Ident {
    Ident::new(CONNECTION_PARAM, Span::call_site())
}

/// `call_with_id`'s id parameter; mixed-site hygiene keeps it apart from
/// the declared parameters.
fn call_id_ident() -> Ident {
    Ident::new("call_id", Span::mixed_site())
}

fn emit(signature: &FunctionSignature, parts: Expansion<'_>) -> TokenStream {
    let Expansion {
        path,
        error_type,
        doc,
        script_const,
        compile_time_checks,
        call_body,
        call_with_id_body,
        function_body,
        companion,
    } = parts;
    // The fallback ignores its parameters; say so rather than add warnings
    // to the compile errors the user is reading.
    let allow_unused = doc.is_none().then(|| quote! { #[allow(unused_variables)] });
    let doc = doc.map(|text| quote! { #[doc = #text] });
    let private = crate::private();
    let failure = match error_type {
        Some(errors) => quote! { #private::Failure<#errors> },
        None => quote! { #private::Error },
    };
    let FunctionSignature {
        attrs,
        vis,
        ident,
        generics,
        reply,
        ..
    } = signature;
    let connection = connection_ident();
    let (_, _, where_clause) = generics.split_for_impl();
    let generic_params = &generics.params;
    let typed_params: Vec<TokenStream> = signature
        .params
        .iter()
        .map(|param| {
            let (name, ty) = (&param.ident, &param.ty);
            quote! { #name: #ty }
        })
        .collect();
    let companion_doc = format!(
        "The script behind [`{ident}()`](fn@{ident}) (`{path}`): its embedded [`Script`](::redis_script::Script) and a prepared-call constructor for batches and deferred calls."
    );
    let call_doc = format!(
        "Encodes a call of `{path}` without sending it: same parameters as [`{ident}()`](fn@{ident}), minus the connection."
    );
    let call_with_id = call_with_id_body.map(|body| {
        let call_id = call_id_ident();
        let doc = format!(
            "Like [`call`](Self::call), with the caller's own id instead of a new one: every call with the same id (from any process, while its record lives) runs `{path}` at most once and gets the first execution's reply."
        );
        quote! {
            #[doc = #doc]
            #allow_unused
            pub fn call_with_id<#generic_params>(
                #call_id: impl ::core::convert::Into<#private::CallId>,
                #(#typed_params),*
            ) -> #private::Call<#reply, #failure>
            #where_clause
            {
                #body
            }
        }
    });
    let function = quote! {
        #(#attrs)*
        #doc
        #allow_unused
        // A trait object rather than a bounded type parameter: a value that
        // is no connection is then one error at the argument, where a
        // bound would also be reported at the call and at its `.await`.
        #vis async fn #ident<#generic_params>(
            #connection: &mut (dyn #private::AsyncConnection + ::core::marker::Send),
            #(#typed_params),*
        ) -> ::core::result::Result<#reply, #failure>
        #where_clause
        {
            #function_body
        }
    };
    if !companion {
        return function;
    }
    quote! {
        #function

        // A braced struct lives in the type namespace only, so it can share
        // the function's name: `name(…)` calls, `name::call(…)` prepares.
        // Unlike a module, it sees the types of the scope it is declared in,
        // also inside a function body.
        #[doc = #companion_doc]
        #[allow(non_camel_case_types)]
        #vis struct #ident {
            _private: (),
        }

        impl #ident {
            #script_const

            #[doc = #call_doc]
            #allow_unused
            pub fn call<#generic_params>(#(#typed_params),*) -> #private::Call<#reply, #failure>
            #where_clause
            {
                #call_body
            }

            #call_with_id
        }

        #compile_time_checks
    }
}

/// Rustdoc for a library function: its description, what it sends, and
/// which parameter goes where.
fn function_doc(
    declaration: &Declaration,
    script: &CheckedScript,
    library: &CheckedLibrary,
) -> String {
    let signature = &declaration.signature;
    let registered = crate::parse::registered_name(declaration);
    let mut doc = String::new();
    let has_user_doc = signature
        .attrs
        .iter()
        .any(|attr| attr.path().is_ident("doc"));
    let description = library
        .functions
        .iter()
        .find(|function| function.registered_name == registered)
        .and_then(|function| function.description.as_deref());
    if let (false, Some(description)) = (has_user_doc, description) {
        doc.push_str(description);
        doc.push('\n');
    }
    doc.push_str(&format!(
        "\n# Function\n\nCalls `{registered}` of the library `{}` (`{}`, SHA1 `{}`) with `{}`, checked at compile time; loads the library where a server lacks it.\n\n| parameter | sent as |\n| --- | --- |\n",
        library.name,
        declaration.options.path.value(),
        library.sha1,
        if script.read_only { "FCALL_RO" } else { "FCALL" },
    ));
    let keys = signature
        .key_params()
        .iter()
        .enumerate()
        .map(|(i, p)| (p, "keys", i + 1));
    let args = signature
        .arg_params()
        .iter()
        .enumerate()
        .map(|(i, p)| (p, "args", i + 1));
    for (param, table, index) in keys.chain(args) {
        let range = if param.variadic { ".." } else { "" };
        doc.push_str(&format!(
            "| `{}` | `{table}[{index}{range}]` |\n",
            param.ident
        ));
    }
    doc
}

/// The full expansion of a library that passed every check: the module
/// with its own items, `LIBRARY`, and one typed call per declared function.
pub fn library_module(declaration: &LibraryDeclaration, library: &CheckedLibrary) -> TokenStream {
    let private = crate::private();
    let CheckedLibrary {
        absolute_path,
        sha1,
        sent_source,
        name,
        registered,
        notes,
        declared_commands_path,
        header,
        functions,
    } = library;
    let path = declaration.path.value();
    let warning_site =
        contract::WarningSite::new(declaration.path.span(), &declaration.module.attrs);
    let warnings = warning_site.warnings(notes);
    let rebuild_triggers = rebuild_triggers(declared_commands_path.as_deref(), absolute_path);
    let calls: TokenStream = declaration
        .functions
        .iter()
        .zip(functions)
        .map(|(function, checked)| {
            let kind = CallKind::Function {
                registered_name: &checked.registered_name,
                called_as: &checked.called_as,
                library,
            };
            typed_call(function, &checked.facts, kind)
        })
        .collect();
    let summary: String = header
        .doc
        .iter()
        .take_while(|line| !line.is_empty())
        .map(|line| format!("{line}\n"))
        .collect();
    let library_doc = format!(
        "{summary}\nThe function library `{name}` (`{path}`, SHA1 `{sha1}`), loaded with `FUNCTION LOAD`: deploy it with [`Library::deploy`](::redis_script::Library::deploy); a call loads it where a server lacks it."
    );
    let library_const = quote! {
        #[doc = #library_doc]
        pub const LIBRARY: #private::Library = #private::new_library(
            #name,
            #path,
            #sent_source,
            #sha1,
            &[#(#registered),*],
        );
        #warnings
        #rebuild_triggers
    };
    module(&declaration.module, library_const, calls)
}

/// The module with its own items and the generated ones.
fn module(shell: &ModuleShell, library_const: TokenStream, calls: TokenStream) -> TokenStream {
    let ModuleShell {
        attrs,
        vis,
        ident,
        items,
    } = shell;
    quote! {
        #(#attrs)*
        #vis mod #ident {
            // The declarations name the types of the enclosing module
            // (reply and error types) as if they were written there.
            #[allow(unused_imports)]
            use super::*;

            #(#items)*

            #library_const

            #calls
        }
    }
}

/// The module with unreachable functions, emitted next to the compile
/// errors so that call sites still resolve and type-check.
pub fn unreachable_library(
    shell: &ModuleShell,
    functions: &[(&FunctionSignature, Option<&Type>)],
) -> TokenStream {
    let private = crate::private();
    let library_const = quote! {
        pub const LIBRARY: #private::Library = #private::new_library("", "", "", "", &[]);
    };
    let calls: TokenStream = functions
        .iter()
        .map(|(signature, errors)| unreachable_function(signature, *errors, false))
        .collect();
    module(shell, library_const, calls)
}
