/// Asks for a name, through a framework that re-exports the runtime as `my_framework::mcp`.
///
/// An `#[mcp_flow]`: `.await` the call inside a tool or flow (it may suspend), or in
/// direct mode.
#[allow(non_camel_case_types)]
struct ask_name<'__mcp_a>(
    &'__mcp_a mut ::my_framework::mcp::__private::v0_1_0::ToolContext,
);
impl<'__mcp_a> ask_name<'__mcp_a> {
    /// Names this call's site: the prefix of the flow's request keys (`site/key`).
    #[allow(dead_code)]
    pub fn key(
        self,
        site: impl ::core::convert::Into<::std::string::String>,
    ) -> ::my_framework::mcp::__private::v0_1_0::Keyed<Self> {
        ::my_framework::mcp::__private::v0_1_0::Keyed::new(self, site)
    }
    /// The function as written (direct mode).
    #[allow(clippy::all)]
    async fn __mcp_direct(cx: &mut ToolContext) -> Result<String, ToolError> {
        let who: Who = cx.ask("Your name?").__mcp_default_key("who").await?;
        Ok(who.name)
    }
    #[allow(
        unused_mut,
        unused_variables,
        unused_assignments,
        unused_labels,
        unreachable_code,
        non_camel_case_types,
        clippy::all
    )]
    async fn __mcp_run(
        cx: &mut ::my_framework::mcp::__private::v0_1_0::ToolContext,
        __mcp_params: ::core::option::Option<()>,
        __mcp_state: ::core::option::Option<
            ::my_framework::mcp::__private::v0_1_0::Value,
        >,
    ) -> ::core::result::Result<
        ::my_framework::mcp::__private::v0_1_0::FlowStep<Result<String, ToolError>>,
        <Result<
            String,
            ToolError,
        > as ::my_framework::mcp::__private::v0_1_0::ToolReturn>::Error,
    > {
        #[allow(unused_imports)]
        use ::my_framework::mcp::__private::v0_1_0::autoref::{
            IsFlow as _, IsKept as _, IsSoft as _, NotFlow as _, NotKept as _,
            NotSoft as _,
        };
        #[allow(dead_code)]
        enum __mcp_State<__mcp_T0> {
            Start,
            S0 { __mcp_m0: __mcp_T0 },
        }
        fn __mcp_finish(
            r: Result<String, ToolError>,
        ) -> ::core::result::Result<
            ::my_framework::mcp::__private::v0_1_0::FlowStep<Result<String, ToolError>>,
            <Result<
                String,
                ToolError,
            > as ::my_framework::mcp::__private::v0_1_0::ToolReturn>::Error,
        > {
            ::core::result::Result::Ok(
                ::my_framework::mcp::__private::v0_1_0::FlowStep::Done(r),
            )
        }
        let mut __mcp_st = match (__mcp_params, __mcp_state) {
            (::core::option::Option::Some(()), _) => __mcp_State::Start,
            (::core::option::Option::None, __mcp_state) => {
                match __mcp_state {
                    ::core::option::Option::None => {
                        return ::core::result::Result::Err(
                            ::my_framework::mcp::__private::v0_1_0::abort::<
                                <Result<
                                    String,
                                    ToolError,
                                > as ::my_framework::mcp::__private::v0_1_0::ToolReturn>::Error,
                            >(
                                cx,
                                ::my_framework::mcp::__private::v0_1_0::invalid_state(),
                            ),
                        );
                    }
                    ::core::option::Option::Some(__mcp_saved) => {
                        let (__mcp_stage, mut __mcp_vars) = ::my_framework::mcp::__private::v0_1_0::ok::<
                            _,
                            <Result<
                                String,
                                ToolError,
                            > as ::my_framework::mcp::__private::v0_1_0::ToolReturn>::Error,
                        >(
                            ::my_framework::mcp::__private::v0_1_0::open_state(
                                __mcp_saved,
                            ),
                            cx,
                        )?;
                        match __mcp_stage.as_str() {
                            "S0" => {
                                __mcp_State::S0 {
                                    __mcp_m0: ::my_framework::mcp::__private::v0_1_0::ok::<
                                        _,
                                        <Result<
                                            String,
                                            ToolError,
                                        > as ::my_framework::mcp::__private::v0_1_0::ToolReturn>::Error,
                                    >(__mcp_vars.marker("__mcp_m0", "who"), cx)?,
                                }
                            }
                            _ => {
                                return ::core::result::Result::Err(
                                    ::my_framework::mcp::__private::v0_1_0::abort::<
                                        <Result<
                                            String,
                                            ToolError,
                                        > as ::my_framework::mcp::__private::v0_1_0::ToolReturn>::Error,
                                    >(
                                        cx,
                                        ::my_framework::mcp::__private::v0_1_0::invalid_state(),
                                    ),
                                );
                            }
                        }
                    }
                }
            }
        };
        '__mcp_dispatch: loop {
            match __mcp_st {
                __mcp_State::Start => {
                    let __mcp_m0 = ::my_framework::mcp::__private::v0_1_0::ok::<
                        _,
                        <Result<
                            String,
                            ToolError,
                        > as ::my_framework::mcp::__private::v0_1_0::ToolReturn>::Error,
                    >(
                        ::my_framework::mcp::__private::v0_1_0::request_key(
                            cx,
                            "who",
                            false,
                            true,
                            ::my_framework::mcp::__private::v0_1_0::Ask::<
                                Who,
                            >::new("Your name?"),
                        ),
                        cx,
                    )?;
                    if cx.round_ready() {
                        __mcp_st = __mcp_State::S0 { __mcp_m0 };
                        continue '__mcp_dispatch;
                    }
                    return ::my_framework::mcp::__private::v0_1_0::suspend_keys(
                        "S0",
                        [],
                        [("__mcp_m0", __mcp_m0.saved("who"))],
                    );
                }
                __mcp_State::S0 { __mcp_m0 } => {
                    if ::my_framework::mcp::__private::v0_1_0::reasking(cx) {
                        let __mcp_m0 = ::my_framework::mcp::__private::v0_1_0::ok::<
                            _,
                            <Result<
                                String,
                                ToolError,
                            > as ::my_framework::mcp::__private::v0_1_0::ToolReturn>::Error,
                        >(
                            ::my_framework::mcp::__private::v0_1_0::request_key(
                                cx,
                                "who",
                                false,
                                true,
                                ::my_framework::mcp::__private::v0_1_0::Ask::<
                                    Who,
                                >::new("Your name?"),
                            ),
                            cx,
                        )?;
                        return ::my_framework::mcp::__private::v0_1_0::reask();
                    }
                    let who: Who = ::my_framework::mcp::__private::v0_1_0::answer_for(
                        cx,
                        __mcp_m0,
                    )?;
                    return __mcp_finish(Ok(who.name));
                }
            }
        }
    }
    /// What the flow takes from the flows it calls.
    #[allow(unreachable_code, clippy::all)]
    fn __mcp_flows() -> ::std::vec::Vec<
        ::my_framework::mcp::__private::v0_1_0::FlowInfo,
    > {
        #[allow(unused_imports)]
        use ::my_framework::mcp::__private::v0_1_0::autoref::{IsFlow as _, NotFlow as _};
        ::std::vec![]
    }
}
impl<'__mcp_a> ::core::future::IntoFuture for ask_name<'__mcp_a> {
    type Output = Result<String, ToolError>;
    type IntoFuture = ::my_framework::mcp::__private::v0_1_0::BoxFuture<
        '__mcp_a,
        Result<String, ToolError>,
    >;
    fn into_future(self) -> Self::IntoFuture {
        let ask_name(__mcp_cx) = self;
        ::std::boxed::Box::pin(async move {
            let __mcp_mark = ::my_framework::mcp::__private::v0_1_0::flow_enter(
                __mcp_cx,
                "ask_name",
            );
            let __mcp_r = Self::__mcp_direct(&mut *__mcp_cx).await;
            ::my_framework::mcp::__private::v0_1_0::flow_leave(__mcp_cx, __mcp_mark);
            __mcp_r
        })
    }
}
impl<'__mcp_a> ::my_framework::mcp::__private::v0_1_0::Flow for ask_name<'__mcp_a> {
    type Output = Result<String, ToolError>;
    const NAME: &'static str = "ask_name";
    fn context(&mut self) -> &mut ::my_framework::mcp::__private::v0_1_0::ToolContext {
        &mut *self.0
    }
    fn info() -> ::my_framework::mcp::__private::v0_1_0::FlowInfo {
        let __mcp_flows = Self::__mcp_flows();
        ::my_framework::mcp::__private::v0_1_0::FlowInfo {
            name: "ask_name",
            capabilities: ::my_framework::mcp::__private::v0_1_0::flow_capabilities(
                ::my_framework::mcp::__private::v0_1_0::RequiredCapabilities {
                    elicitation: true,
                    sampling: false,
                    roots: false,
                },
                &__mcp_flows,
            ),
            state: ::my_framework::mcp::__private::v0_1_0::state_keys(
                ::std::vec![],
                &__mcp_flows,
            ),
            layout: ::my_framework::mcp::__private::v0_1_0::layout_with(
                "eAeIViMWAbI",
                &__mcp_flows,
            ),
            rounds: ::my_framework::mcp::__private::v0_1_0::flow_rounds(
                1u32,
                &__mcp_flows,
            ),
            loops: ::my_framework::mcp::__private::v0_1_0::flow_loops(
                false,
                &__mcp_flows,
            ),
            validation: ::my_framework::mcp::__private::v0_1_0::validate_with(
                (|| -> ::core::result::Result<
                    (),
                    ::my_framework::mcp::__private::v0_1_0::RegistrationError,
                > {
                    ::my_framework::mcp::__private::v0_1_0::check_elicitation::<
                        Who,
                    >("who")?;
                    ::core::result::Result::Ok(())
                })(),
                &__mcp_flows,
            ),
        }
    }
    fn start<'s>(
        self,
    ) -> ::my_framework::mcp::__private::v0_1_0::BoxFuture<
        's,
        ::my_framework::mcp::__private::v0_1_0::FlowStep<Result<String, ToolError>>,
    >
    where
        Self: 's,
    {
        let ask_name(__mcp_cx) = self;
        ::std::boxed::Box::pin(async move {
            let __mcp_mark = ::my_framework::mcp::__private::v0_1_0::flow_enter(
                __mcp_cx,
                "ask_name",
            );
            let __mcp_out = Self::__mcp_run(
                    &mut *__mcp_cx,
                    ::core::option::Option::Some(()),
                    ::core::option::Option::None,
                )
                .await;
            ::my_framework::mcp::__private::v0_1_0::flow_leave(__mcp_cx, __mcp_mark);
            ::my_framework::mcp::__private::v0_1_0::flow_outcome(__mcp_out)
        })
    }
    fn resume(
        cx: &mut ::my_framework::mcp::__private::v0_1_0::ToolContext,
        state: ::my_framework::mcp::__private::v0_1_0::Value,
    ) -> ::my_framework::mcp::__private::v0_1_0::BoxFuture<
        '_,
        ::my_framework::mcp::__private::v0_1_0::FlowStep<Result<String, ToolError>>,
    > {
        ::std::boxed::Box::pin(async move {
            let __mcp_mark = ::my_framework::mcp::__private::v0_1_0::flow_enter(
                cx,
                "ask_name",
            );
            let __mcp_out = Self::__mcp_run(
                    &mut *cx,
                    ::core::option::Option::None,
                    ::core::option::Option::Some(state),
                )
                .await;
            ::my_framework::mcp::__private::v0_1_0::flow_leave(cx, __mcp_mark);
            ::my_framework::mcp::__private::v0_1_0::flow_outcome(__mcp_out)
        })
    }
}
#[allow(dead_code)]
/// Greets, with application state, through the same re-export.
async fn greet(
    cx: &mut ToolContext,
    args: Greeting,
    names: State<Names>,
) -> Result<String, ToolError> {
    let name = ask_name(::my_framework::mcp::__private::v0_1_0::site(cx, "name")).await?;
    names.remember(&name);
    Ok(format!("{}, {name}!", args.greeting))
}
///The `greet` MCP tool generated by `#[mcp_tool]` from `fn greet`: register it with `greet::tool()`.
#[allow(non_camel_case_types)]
struct greet {}
impl greet {
    /// The tool, ready for `Server::builder(..).tool(..)`.
    fn tool() -> Self {
        greet {}
    }
    /// What the tool takes from the flows it calls.
    #[allow(unreachable_code, clippy::all)]
    fn __mcp_flows() -> ::std::vec::Vec<
        ::my_framework::mcp::__private::v0_1_0::FlowInfo,
    > {
        #[allow(unused_imports)]
        use ::my_framework::mcp::__private::v0_1_0::autoref::{IsFlow as _, NotFlow as _};
        ::std::vec![
            (&& ::my_framework::mcp::__private::v0_1_0::autoref::wrap_witness(& if false
            { ::core::option::Option::Some(ask_name(loop {})) } else {
            ::core::option::Option::None })).ops().info()
        ]
    }
    /// The completed value of the function's result.
    #[allow(clippy::all)]
    fn __mcp_done(
        __mcp_r: Result<String, ToolError>,
        __mcp_uri: &str,
    ) -> ::core::result::Result<
        ::my_framework::mcp::__private::v0_1_0::CallToolResult,
        ::my_framework::mcp::__private::v0_1_0::ToolError,
    > {
        let _ = __mcp_uri;
        #[allow(unused_imports)]
        use ::my_framework::mcp::__private::v0_1_0::autoref::{
            AnyhowError as _, OtherError as _, OwnError as _, RawOutput as _,
            StructuredOutput as _, TextOutput as _,
        };
        match ::my_framework::mcp::__private::v0_1_0::ToolReturn::into_result(__mcp_r) {
            ::core::result::Result::Ok(__mcp_v) => {
                (&&::my_framework::mcp::__private::v0_1_0::autoref::OutputOf::<
                    <Result<
                        String,
                        ToolError,
                    > as ::my_framework::mcp::__private::v0_1_0::ToolReturn>::Ok,
                >::new())
                    .finish(__mcp_v)
            }
            ::core::result::Result::Err(__mcp_e) => {
                ::core::result::Result::Err(
                    (&&::my_framework::mcp::__private::v0_1_0::autoref::ErrorOf::<
                        <Result<
                            String,
                            ToolError,
                        > as ::my_framework::mcp::__private::v0_1_0::ToolReturn>::Error,
                    >::new())
                        .tool_error(__mcp_e),
                )
            }
        }
    }
    #[allow(unused_mut, unused_variables, clippy::all)]
    async fn __mcp_direct(
        cx: &mut ::my_framework::mcp::__private::v0_1_0::ToolContext,
        mut __mcp_args: ::my_framework::mcp::__private::v0_1_0::Value,
        __mcp_uri: ::std::string::String,
    ) -> ::core::result::Result<
        ::my_framework::mcp::__private::v0_1_0::CallToolResult,
        ::my_framework::mcp::__private::v0_1_0::ToolError,
    > {
        let __mcp_p0: Greeting = ::my_framework::mcp::__private::v0_1_0::parse_args::<
            Greeting,
        >(::core::mem::take(&mut __mcp_args))?;
        let __mcp_p1: State<Names> = <State<
            Names,
        > as ::my_framework::mcp::__private::v0_1_0::FromContext>::from_context(cx)?;
        let __mcp_r = greet(&mut *cx, __mcp_p0, __mcp_p1).await;
        if let ::core::option::Option::Some(__mcp_e) = ::my_framework::mcp::__private::v0_1_0::take_abort(
            cx,
        ) {
            return ::core::result::Result::Err(__mcp_e);
        }
        Self::__mcp_done(__mcp_r, &__mcp_uri)
    }
}
impl ::my_framework::mcp::__private::v0_1_0::Tool for greet {
    fn info(&self) -> ::my_framework::mcp::__private::v0_1_0::ToolInfo {
        let __mcp_flows = Self::__mcp_flows();
        let __mcp_rounds = ::my_framework::mcp::__private::v0_1_0::Rounds {
            capabilities: ::my_framework::mcp::__private::v0_1_0::flow_capabilities(
                ::my_framework::mcp::__private::v0_1_0::RequiredCapabilities {
                    elicitation: false,
                    sampling: false,
                    roots: false,
                },
                &__mcp_flows,
            ),
            max_rounds: 2u32,
            state_ttl: ::core::option::Option::None,
            layout: ::my_framework::mcp::__private::v0_1_0::layout_with(
                "TvzJylgih00",
                &__mcp_flows,
            ),
            journal: false,
            early_answers: false,
            once: false,
        };
        ::my_framework::mcp::__private::v0_1_0::ToolInfo {
            name: ::std::string::String::from("greet"),
            title: ::core::option::Option::None,
            description: ::core::option::Option::Some(
                ::std::string::String::from(
                    "Greets, with application state, through the same re-export.",
                ),
            ),
            input_schema: ::my_framework::mcp::__private::v0_1_0::input_schema::<
                Greeting,
            >(),
            output_schema: {
                #[allow(unused_imports)]
                use ::my_framework::mcp::__private::v0_1_0::autoref::{
                    TextOutput as _, RawOutput as _, StructuredOutput as _,
                };
                (&&::my_framework::mcp::__private::v0_1_0::autoref::OutputOf::<
                    <Result<
                        String,
                        ToolError,
                    > as ::my_framework::mcp::__private::v0_1_0::ToolReturn>::Ok,
                >::new())
                    .schema()
            },
            annotations: ::my_framework::mcp::__private::v0_1_0::annotations(
                ::core::option::Option::None,
                ::core::option::Option::None,
                ::core::option::Option::None,
                ::core::option::Option::None,
                ::core::option::Option::None,
            ),
            capabilities: __mcp_rounds.capabilities,
            max_rounds: __mcp_rounds.max_rounds,
            state_ttl: __mcp_rounds.state_ttl,
            layout: __mcp_rounds.layout,
            journal: __mcp_rounds.journal,
            early_answers: __mcp_rounds.early_answers,
            once: __mcp_rounds.once,
            task: ::my_framework::mcp::__private::v0_1_0::TaskSupport::Forbidden,
            task_start: ::my_framework::mcp::__private::v0_1_0::TaskStart::Call,
            scopes: ::std::vec![],
        }
    }
    fn validate(
        &self,
    ) -> ::core::result::Result<
        (),
        ::my_framework::mcp::__private::v0_1_0::RegistrationError,
    > {
        ::my_framework::mcp::__private::v0_1_0::validate_with(
            (|| -> ::core::result::Result<
                (),
                ::my_framework::mcp::__private::v0_1_0::RegistrationError,
            > { ::core::result::Result::Ok(()) })(),
            &Self::__mcp_flows(),
        )
    }
    fn required_state(
        &self,
    ) -> ::std::vec::Vec<::my_framework::mcp::__private::v0_1_0::StateKey> {
        ::my_framework::mcp::__private::v0_1_0::state_keys(
            ::std::vec![
                < State < Names > as ::my_framework::mcp::__private::v0_1_0::FromContext
                > ::keys()
            ],
            &Self::__mcp_flows(),
        )
    }
    fn step<'a>(
        &'a self,
        cx: &'a mut ::my_framework::mcp::__private::v0_1_0::ToolContext,
        args: ::my_framework::mcp::__private::v0_1_0::Value,
        state: ::core::option::Option<::my_framework::mcp::__private::v0_1_0::Value>,
    ) -> ::my_framework::mcp::__private::v0_1_0::BoxFuture<
        'a,
        ::core::result::Result<
            ::my_framework::mcp::__private::v0_1_0::Step,
            ::my_framework::mcp::__private::v0_1_0::ToolError,
        >,
    > {
        #[allow(
            unused_mut,
            unused_variables,
            unused_assignments,
            unused_labels,
            unreachable_code,
            non_camel_case_types,
            clippy::all
        )]
        async fn __mcp_run(
            cx: &mut ::my_framework::mcp::__private::v0_1_0::ToolContext,
            __mcp_args: ::my_framework::mcp::__private::v0_1_0::Value,
            __mcp_state: ::core::option::Option<
                ::my_framework::mcp::__private::v0_1_0::Value,
            >,
        ) -> ::core::result::Result<
            ::my_framework::mcp::__private::v0_1_0::FlowStep<Result<String, ToolError>>,
            <Result<
                String,
                ToolError,
            > as ::my_framework::mcp::__private::v0_1_0::ToolReturn>::Error,
        > {
            #[allow(unused_imports)]
            use ::my_framework::mcp::__private::v0_1_0::autoref::{
                IsFlow as _, IsKept as _, IsSoft as _, NotFlow as _, NotKept as _,
                NotSoft as _,
            };
            #[allow(dead_code)]
            enum __mcp_State<__mcp_T0> {
                Start,
                S0 { __mcp_m0: __mcp_T0 },
            }
            fn __mcp_finish(
                r: Result<String, ToolError>,
            ) -> ::core::result::Result<
                ::my_framework::mcp::__private::v0_1_0::FlowStep<
                    Result<String, ToolError>,
                >,
                <Result<
                    String,
                    ToolError,
                > as ::my_framework::mcp::__private::v0_1_0::ToolReturn>::Error,
            > {
                ::core::result::Result::Ok(
                    ::my_framework::mcp::__private::v0_1_0::FlowStep::Done(r),
                )
            }
            let mut __mcp_parsed = ::core::option::Option::Some(
                ::my_framework::mcp::__private::v0_1_0::ok::<
                    _,
                    <Result<
                        String,
                        ToolError,
                    > as ::my_framework::mcp::__private::v0_1_0::ToolReturn>::Error,
                >(
                    ::my_framework::mcp::__private::v0_1_0::parse_args::<
                        Greeting,
                    >(__mcp_args.clone()),
                    cx,
                )?,
            );
            let mut __mcp_st = match __mcp_state {
                ::core::option::Option::None => __mcp_State::Start,
                ::core::option::Option::Some(__mcp_saved) => {
                    let (__mcp_stage, mut __mcp_vars) = ::my_framework::mcp::__private::v0_1_0::ok::<
                        _,
                        <Result<
                            String,
                            ToolError,
                        > as ::my_framework::mcp::__private::v0_1_0::ToolReturn>::Error,
                    >(
                        ::my_framework::mcp::__private::v0_1_0::open_state(__mcp_saved),
                        cx,
                    )?;
                    match __mcp_stage.as_str() {
                        "S0" => {
                            __mcp_State::S0 {
                                __mcp_m0: ::my_framework::mcp::__private::v0_1_0::ok::<
                                    _,
                                    <Result<
                                        String,
                                        ToolError,
                                    > as ::my_framework::mcp::__private::v0_1_0::ToolReturn>::Error,
                                >(__mcp_vars.flow("__mcp_m0", "name"), cx)?,
                            }
                        }
                        _ => {
                            return ::core::result::Result::Err(
                                ::my_framework::mcp::__private::v0_1_0::abort::<
                                    <Result<
                                        String,
                                        ToolError,
                                    > as ::my_framework::mcp::__private::v0_1_0::ToolReturn>::Error,
                                >(
                                    cx,
                                    ::my_framework::mcp::__private::v0_1_0::invalid_state(),
                                ),
                            );
                        }
                    }
                }
            };
            '__mcp_dispatch: loop {
                match __mcp_st {
                    __mcp_State::Start => {
                        let __mcp_site0: ::std::string::String = ::std::string::String::from(
                            "name",
                        );
                        let __mcp_call = ask_name(cx);
                        let __mcp_m0 = match (&&::my_framework::mcp::__private::v0_1_0::autoref::wrap(
                            &__mcp_call,
                        ))
                            .ops()
                            .start(::core::clone::Clone::clone(&__mcp_site0), __mcp_call)
                            .await
                        {
                            ::my_framework::mcp::__private::v0_1_0::FlowStep::Done(
                                __mcp_r,
                            ) => {
                                ::my_framework::mcp::__private::v0_1_0::FlowSlot::Done(
                                    __mcp_r,
                                )
                            }
                            ::my_framework::mcp::__private::v0_1_0::FlowStep::Suspended(
                                __mcp_s,
                            ) => {
                                return ::my_framework::mcp::__private::v0_1_0::suspend_flow(
                                    "S0",
                                    [],
                                    "__mcp_m0",
                                    __mcp_s,
                                    &__mcp_site0,
                                    "name",
                                );
                            }
                        };
                        __mcp_st = __mcp_State::S0 { __mcp_m0 };
                        continue '__mcp_dispatch;
                    }
                    __mcp_State::S0 { __mcp_m0 } => {
                        let args: Greeting = ::my_framework::mcp::__private::v0_1_0::ok::<
                            _,
                            <Result<
                                String,
                                ToolError,
                            > as ::my_framework::mcp::__private::v0_1_0::ToolReturn>::Error,
                        >(
                            ::my_framework::mcp::__private::v0_1_0::stage_args(
                                &mut __mcp_parsed,
                                &__mcp_args,
                            ),
                            cx,
                        )?;
                        let names: State<Names> = ::my_framework::mcp::__private::v0_1_0::ok::<
                            _,
                            <Result<
                                String,
                                ToolError,
                            > as ::my_framework::mcp::__private::v0_1_0::ToolReturn>::Error,
                        >(
                            <State<
                                Names,
                            > as ::my_framework::mcp::__private::v0_1_0::FromContext>::from_context(
                                cx,
                            ),
                            cx,
                        )?;
                        let __mcp_r0 = match __mcp_m0 {
                            ::my_framework::mcp::__private::v0_1_0::FlowSlot::Done(
                                __mcp_r,
                            ) => __mcp_r,
                            ::my_framework::mcp::__private::v0_1_0::FlowSlot::Saved(
                                __mcp_site0,
                                __mcp_s,
                            ) => {
                                let __mcp_w = if false {
                                    ::core::option::Option::Some(ask_name(loop {}))
                                } else {
                                    ::core::option::Option::None
                                };
                                match (&&::my_framework::mcp::__private::v0_1_0::autoref::wrap_witness(
                                    &__mcp_w,
                                ))
                                    .ops()
                                    .resume(
                                        cx,
                                        ::core::clone::Clone::clone(&__mcp_site0),
                                        __mcp_s,
                                    )
                                    .await
                                {
                                    ::my_framework::mcp::__private::v0_1_0::FlowStep::Done(
                                        __mcp_r,
                                    ) => __mcp_r,
                                    ::my_framework::mcp::__private::v0_1_0::FlowStep::Suspended(
                                        __mcp_s,
                                    ) => {
                                        return ::my_framework::mcp::__private::v0_1_0::suspend_flow(
                                            "S0",
                                            [],
                                            "__mcp_m0",
                                            __mcp_s,
                                            &__mcp_site0,
                                            "name",
                                        );
                                    }
                                }
                            }
                        };
                        let name = __mcp_r0?;
                        names.remember(&name);
                        return __mcp_finish(Ok(format!("{}, {name}!", args.greeting)));
                    }
                }
            }
        }
        ::std::boxed::Box::pin(async move {
            let __mcp_out = __mcp_run(&mut *cx, args, state).await;
            if let ::core::option::Option::Some(__mcp_e) = ::my_framework::mcp::__private::v0_1_0::take_abort(
                cx,
            ) {
                return ::core::result::Result::Err(__mcp_e);
            }
            match __mcp_out {
                ::core::result::Result::Ok(
                    ::my_framework::mcp::__private::v0_1_0::FlowStep::Done(__mcp_r),
                ) => {
                    Self::__mcp_done(__mcp_r, "")
                        .map(::my_framework::mcp::__private::v0_1_0::Step::Complete)
                }
                ::core::result::Result::Ok(
                    ::my_framework::mcp::__private::v0_1_0::FlowStep::Suspended(__mcp_s),
                ) => {
                    ::core::result::Result::Ok(::my_framework::mcp::__private::v0_1_0::Step::Suspend {
                        state: __mcp_s,
                    })
                }
                ::core::result::Result::Err(__mcp_e) => {
                    #[allow(unused_imports)]
                    use ::my_framework::mcp::__private::v0_1_0::autoref::{
                        AnyhowError as _, OtherError as _, OwnError as _,
                    };
                    ::core::result::Result::Err(
                        (&&::my_framework::mcp::__private::v0_1_0::autoref::ErrorOf::<
                            <Result<
                                String,
                                ToolError,
                            > as ::my_framework::mcp::__private::v0_1_0::ToolReturn>::Error,
                        >::new())
                            .tool_error(__mcp_e),
                    )
                }
            }
        })
    }
    fn direct<'a>(
        &'a self,
        cx: &'a mut ::my_framework::mcp::__private::v0_1_0::ToolContext,
        args: ::my_framework::mcp::__private::v0_1_0::Value,
    ) -> ::core::option::Option<
        ::my_framework::mcp::__private::v0_1_0::BoxFuture<
            'a,
            ::core::result::Result<
                ::my_framework::mcp::__private::v0_1_0::CallToolResult,
                ::my_framework::mcp::__private::v0_1_0::ToolError,
            >,
        >,
    > {
        #[allow(unused_imports)]
        use ::my_framework::mcp::__private::v0_1_0::autoref::{
            LocalFuture as _, SendFuture as _,
        };
        (&::my_framework::mcp::__private::v0_1_0::autoref::DirectWrap::new(
            Self::__mcp_direct(cx, args, ::std::string::String::new()),
        ))
            .boxed()
    }
}
