//! Phase 3: the typed function, its `call` constructor and its `SCRIPT`.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::Ident;

use crate::check::CheckedScript;
use crate::parse::{CONNECTION_PARAM, Declaration, FunctionSignature};

/// The full expansion for a script that passed every check.
pub fn script_function(declaration: &Declaration, script: &CheckedScript) -> TokenStream {
    let signature = &declaration.signature;
    let name = signature.ident.to_string();
    let path = declaration.options.path.value();
    let CheckedScript {
        absolute_path,
        sha1,
        read_only,
        allow_cross_slot_keys,
    } = script;

    let key_idents = signature.key_params().iter().map(|param| &param.ident);
    let arg_idents = signature.arg_params().iter().map(|param| &param.ident);
    let script_static = quote! {
        /// The embedded script: its source, SHA1 and the facts checked at compile time.
        pub static SCRIPT: ::redis_script::Script = ::redis_script::Script::__new(
            #name,
            #path,
            ::core::include_str!(#absolute_path),
            #sha1,
            #read_only,
            #allow_cross_slot_keys,
        );
    };
    let call_body = quote! {
        let mut keys = ::redis_script::__private::Keys::new();
        #( keys.push(&#key_idents); )*
        #[allow(unused_mut)]
        let mut call = ::redis_script::Call::__start(&SCRIPT, keys);
        #( call.__arg(&#arg_idents); )*
        call
    };
    let ident = &signature.ident;
    let connection = connection_ident();
    let params = signature.params.iter().map(|param| &param.ident);
    let function_body = quote! {
        #ident::call(#(#params),*).invoke(#connection).await
    };
    emit(signature, &path, script_static, call_body, function_body)
}

/// The declared items with unreachable bodies, emitted next to the compile
/// errors so that call sites still resolve and type-check.
pub fn unreachable_function(signature: &FunctionSignature) -> TokenStream {
    let unreachable = quote! {
        #[allow(unused_variables)]
        let _ = ();
        ::core::unreachable!("#[redis_script] failed to compile")
    };
    emit(
        signature,
        "",
        TokenStream::new(),
        unreachable.clone(),
        unreachable,
    )
}

fn connection_ident() -> Ident {
    Ident::new(CONNECTION_PARAM, Span::call_site())
}

fn emit(
    signature: &FunctionSignature,
    path: &str,
    script_static: TokenStream,
    call_body: TokenStream,
    function_body: TokenStream,
) -> TokenStream {
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
    let module_doc = format!(
        "The script behind [`{ident}()`](fn@{ident}) (`{path}`) and a prepared-call constructor for pipelines and deferred calls."
    );
    let call_doc = format!(
        "Encodes a call of `{path}` without sending it: same parameters as [`{ident}()`](fn@{ident}), minus the connection."
    );
    quote! {
        #(#attrs)*
        #vis async fn #ident<#generic_params __Connection>(
            #connection: &mut __Connection,
            #(#typed_params),*
        ) -> ::core::result::Result<#reply, ::redis_script::Error>
        where
            __Connection: ::redis_script::__private::redis::aio::ConnectionLike + ?::core::marker::Sized,
            #where_clause
        {
            #function_body
        }

        #[doc = #module_doc]
        #vis mod #ident {
            #[allow(unused_imports)]
            use super::*;

            #script_static

            #[doc = #call_doc]
            pub fn call<#generic_params>(#(#typed_params),*) -> ::redis_script::Call<#reply>
            #where_clause
            {
                #call_body
            }
        }
    }
}
