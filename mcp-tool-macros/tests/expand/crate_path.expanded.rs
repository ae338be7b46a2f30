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
}
#[allow(warnings, clippy::all)]
const _: () = {
    use ::my_framework::mcp::__private::v0_1_0 as __mcp;
    use __mcp::autoref::traits::*;
    type __mcp_Ret = Result<String, ToolError>;
    type __mcp_Ok = <__mcp_Ret as __mcp::ToolReturn>::Ok;
    type __mcp_Err = <__mcp_Ret as __mcp::ToolReturn>::Error;
    impl<'__mcp_a> ask_name<'__mcp_a> {
        async fn __mcp_run(
            cx: &mut __mcp::ToolContext,
            __mcp_params: __mcp::Option<()>,
            __mcp_state: __mcp::Option<__mcp::Value>,
        ) -> __mcp::Result<__mcp::FlowStep<__mcp_Ret>, __mcp_Err> {
            enum __mcp_State<__mcp_T0> {
                Start,
                S0 { __mcp_m0: __mcp_T0 },
            }
            fn __mcp_finish(
                r: __mcp_Ret,
            ) -> __mcp::Result<__mcp::FlowStep<__mcp_Ret>, __mcp_Err> {
                __mcp::Result::Ok(__mcp::FlowStep::Done(r))
            }
            fn __mcp_ok<__mcp_V>(
                r: __mcp::Result<__mcp_V, __mcp::ToolError>,
                cx: &mut __mcp::ToolContext,
            ) -> __mcp::Result<__mcp_V, __mcp_Err> {
                __mcp::ok(r, cx)
            }
            let mut __mcp_st = match (__mcp_params, __mcp_state) {
                (__mcp::Option::Some(()), _) => __mcp_State::Start,
                (__mcp::Option::None, __mcp_state) => {
                    match __mcp_state {
                        __mcp::Option::None => {
                            return __mcp::Result::Err(
                                __mcp::abort::<__mcp_Err>(cx, __mcp::invalid_state()),
                            );
                        }
                        __mcp::Option::Some(__mcp_saved) => {
                            let (__mcp_stage, mut __mcp_vars) = __mcp_ok(
                                __mcp::open_state(__mcp_saved),
                                cx,
                            )?;
                            match __mcp_stage.as_str() {
                                "S0" => {
                                    __mcp_State::S0 {
                                        __mcp_m0: __mcp_ok(
                                            __mcp_vars.marker("__mcp_m0", "who"),
                                            cx,
                                        )?,
                                    }
                                }
                                _ => {
                                    return __mcp::Result::Err(
                                        __mcp::abort::<__mcp_Err>(cx, __mcp::invalid_state()),
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
                        let __mcp_m0 = __mcp_ok(
                            __mcp::request_key(
                                cx,
                                "who",
                                false,
                                true,
                                __mcp::Ask::<Who>::new("Your name?"),
                            ),
                            cx,
                        )?;
                        if cx.round_ready() {
                            __mcp_st = __mcp_State::S0 { __mcp_m0 };
                            continue '__mcp_dispatch;
                        }
                        return __mcp::suspend_keys(
                            "S0",
                            [],
                            [("__mcp_m0", __mcp_m0.saved("who"))],
                        );
                    }
                    __mcp_State::S0 { __mcp_m0 } => {
                        if __mcp::reasking(cx) {
                            let __mcp_m0 = __mcp_ok(
                                __mcp::request_key(
                                    cx,
                                    "who",
                                    false,
                                    true,
                                    __mcp::Ask::<Who>::new("Your name?"),
                                ),
                                cx,
                            )?;
                            return __mcp::reask();
                        }
                        let who: Who = __mcp::answer_for(cx, __mcp_m0)?;
                        return __mcp_finish(Ok(who.name));
                    }
                }
            }
        }
        /// What the flow takes from the flows it calls.
        fn __mcp_flows() -> __mcp::Vec<__mcp::FlowInfo> {
            ::std::vec![]
        }
    }
    impl<'__mcp_a> ::core::future::IntoFuture for ask_name<'__mcp_a> {
        type Output = __mcp_Ret;
        type IntoFuture = __mcp::BoxFuture<'__mcp_a, __mcp_Ret>;
        fn into_future(self) -> Self::IntoFuture {
            let ask_name(__mcp_cx) = self;
            __mcp::Box::pin(async move {
                let __mcp_mark = __mcp::flow_enter(__mcp_cx, "ask_name");
                let __mcp_r = Self::__mcp_direct(&mut *__mcp_cx).await;
                __mcp::flow_leave(__mcp_cx, __mcp_mark);
                __mcp_r
            })
        }
    }
    impl<'__mcp_a> __mcp::Flow for ask_name<'__mcp_a> {
        type Output = __mcp_Ret;
        const NAME: &'static str = "ask_name";
        fn context(&mut self) -> &mut __mcp::ToolContext {
            &mut *self.0
        }
        fn info() -> __mcp::FlowInfo {
            let __mcp_flows = Self::__mcp_flows();
            __mcp::FlowInfo {
                name: "ask_name",
                capabilities: __mcp::flow_capabilities(
                    __mcp::RequiredCapabilities {
                        elicitation: true,
                        sampling: false,
                        roots: false,
                    },
                    &__mcp_flows,
                ),
                state: __mcp::state_keys(::std::vec![], &__mcp_flows),
                layout: __mcp::layout_with("eAeIViMWAbI", &__mcp_flows),
                rounds: __mcp::flow_rounds(1u32, &__mcp_flows),
                loops: __mcp::flow_loops(false, &__mcp_flows),
                validation: __mcp::validate_with(
                    (|| -> __mcp::Result<(), __mcp::RegistrationError> {
                        __mcp::check_elicitation::<Who>("who")?;
                        __mcp::Result::Ok(())
                    })(),
                    &__mcp_flows,
                ),
            }
        }
        fn start<'s>(self) -> __mcp::BoxFuture<'s, __mcp::FlowStep<__mcp_Ret>>
        where
            Self: 's,
        {
            let ask_name(__mcp_cx) = self;
            __mcp::Box::pin(async move {
                let __mcp_mark = __mcp::flow_enter(__mcp_cx, "ask_name");
                let __mcp_out = Self::__mcp_run(
                        &mut *__mcp_cx,
                        __mcp::Option::Some(()),
                        __mcp::Option::None,
                    )
                    .await;
                __mcp::flow_leave(__mcp_cx, __mcp_mark);
                __mcp::flow_outcome(__mcp_out)
            })
        }
        fn resume(
            cx: &mut __mcp::ToolContext,
            state: __mcp::Value,
        ) -> __mcp::BoxFuture<'_, __mcp::FlowStep<__mcp_Ret>> {
            __mcp::Box::pin(async move {
                let __mcp_mark = __mcp::flow_enter(cx, "ask_name");
                let __mcp_out = Self::__mcp_run(
                        &mut *cx,
                        __mcp::Option::None,
                        __mcp::Option::Some(state),
                    )
                    .await;
                __mcp::flow_leave(cx, __mcp_mark);
                __mcp::flow_outcome(__mcp_out)
            })
        }
    }
};
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
#[allow(warnings, clippy::all)]
const _: () = {
    use ::my_framework::mcp::__private::v0_1_0 as __mcp;
    use __mcp::autoref::traits::*;
    type __mcp_Ret = Result<String, ToolError>;
    type __mcp_Ok = <__mcp_Ret as __mcp::ToolReturn>::Ok;
    type __mcp_Err = <__mcp_Ret as __mcp::ToolReturn>::Error;
    impl greet {
        /// The tool, ready for `Server::builder(..).tool(..)`.
        fn tool() -> Self {
            greet {}
        }
        /// What the tool takes from the flows it calls.
        fn __mcp_flows() -> __mcp::Vec<__mcp::FlowInfo> {
            ::std::vec![
                (&& __mcp::autoref::wrap_witness(& if false {
                __mcp::Option::Some(ask_name(loop {})) } else { __mcp::Option::None }))
                .ops().info()
            ]
        }
        /// The completed value of the function's result.
        fn __mcp_done(
            __mcp_r: __mcp_Ret,
            __mcp_uri: &str,
        ) -> __mcp::Result<__mcp::CallToolResult, __mcp::ToolError> {
            match __mcp::ToolReturn::into_result(__mcp_r) {
                __mcp::Result::Ok(__mcp_v) => {
                    (&&__mcp::autoref::OutputOf::<__mcp_Ok>::new()).finish(__mcp_v)
                }
                __mcp::Result::Err(__mcp_e) => {
                    __mcp::Result::Err(
                        (&&__mcp::autoref::ErrorOf::<__mcp_Err>::new())
                            .tool_error(__mcp_e),
                    )
                }
            }
        }
        async fn __mcp_direct(
            cx: &mut __mcp::ToolContext,
            mut __mcp_args: __mcp::Value,
            __mcp_uri: __mcp::String,
        ) -> __mcp::Result<__mcp::CallToolResult, __mcp::ToolError> {
            let __mcp_p0: Greeting = __mcp::parse_args::<
                Greeting,
            >(::core::mem::take(&mut __mcp_args))?;
            let __mcp_p1: State<Names> = <State<
                Names,
            > as __mcp::FromContext>::from_context(cx)?;
            let __mcp_r = greet(&mut *cx, __mcp_p0, __mcp_p1).await;
            __mcp::direct_done(
                cx,
                __mcp_r,
                |__mcp_r| Self::__mcp_done(__mcp_r, &__mcp_uri),
            )
        }
    }
    impl __mcp::Tool for greet {
        fn info(&self) -> __mcp::ToolInfo {
            __mcp::tool_info(
                &__mcp::Meta {
                    name: "greet",
                    description: __mcp::Option::Some(
                        "Greets, with application state, through the same re-export.",
                    ),
                    max_rounds: __mcp::Option::Some(2u32),
                    layout: "TvzJylgih00",
                    ..__mcp::Meta::DEFAULT
                },
                __mcp::input_schema::<Greeting>(),
                { (&&__mcp::autoref::OutputOf::<__mcp_Ok>::new()).schema() },
                &Self::__mcp_flows(),
            )
        }
        fn validate(&self) -> __mcp::Result<(), __mcp::RegistrationError> {
            __mcp::validate_with(
                (|| -> __mcp::Result<(), __mcp::RegistrationError> {
                    __mcp::Result::Ok(())
                })(),
                &Self::__mcp_flows(),
            )
        }
        fn required_state(&self) -> __mcp::Vec<__mcp::StateKey> {
            __mcp::state_keys(
                ::std::vec![< State < Names > as __mcp::FromContext > ::keys()],
                &Self::__mcp_flows(),
            )
        }
        fn step<'a>(
            &'a self,
            cx: &'a mut __mcp::ToolContext,
            args: __mcp::Value,
            state: __mcp::Option<__mcp::Value>,
        ) -> __mcp::BoxFuture<'a, __mcp::Result<__mcp::Step, __mcp::ToolError>> {
            async fn __mcp_run(
                cx: &mut __mcp::ToolContext,
                __mcp_args: __mcp::Value,
                __mcp_state: __mcp::Option<__mcp::Value>,
            ) -> __mcp::Result<__mcp::FlowStep<__mcp_Ret>, __mcp_Err> {
                enum __mcp_State<__mcp_T0> {
                    Start,
                    S0 { __mcp_m0: __mcp_T0 },
                }
                fn __mcp_finish(
                    r: __mcp_Ret,
                ) -> __mcp::Result<__mcp::FlowStep<__mcp_Ret>, __mcp_Err> {
                    __mcp::Result::Ok(__mcp::FlowStep::Done(r))
                }
                fn __mcp_ok<__mcp_V>(
                    r: __mcp::Result<__mcp_V, __mcp::ToolError>,
                    cx: &mut __mcp::ToolContext,
                ) -> __mcp::Result<__mcp_V, __mcp_Err> {
                    __mcp::ok(r, cx)
                }
                let mut __mcp_parsed = __mcp::Option::Some(
                    __mcp_ok(__mcp::parse_args::<Greeting>(__mcp_args.clone()), cx)?,
                );
                let mut __mcp_st = match __mcp_state {
                    __mcp::Option::None => __mcp_State::Start,
                    __mcp::Option::Some(__mcp_saved) => {
                        let (__mcp_stage, mut __mcp_vars) = __mcp_ok(
                            __mcp::open_state(__mcp_saved),
                            cx,
                        )?;
                        match __mcp_stage.as_str() {
                            "S0" => {
                                __mcp_State::S0 {
                                    __mcp_m0: __mcp_ok(__mcp_vars.flow("__mcp_m0", "name"), cx)?,
                                }
                            }
                            _ => {
                                return __mcp::Result::Err(
                                    __mcp::abort::<__mcp_Err>(cx, __mcp::invalid_state()),
                                );
                            }
                        }
                    }
                };
                '__mcp_dispatch: loop {
                    match __mcp_st {
                        __mcp_State::Start => {
                            let __mcp_site0: __mcp::String = __mcp::String::from("name");
                            let __mcp_call = ask_name(cx);
                            let __mcp_m0 = match (&&__mcp::autoref::wrap(&__mcp_call))
                                .ops()
                                .start(
                                    ::core::clone::Clone::clone(&__mcp_site0),
                                    __mcp_call,
                                )
                                .await
                            {
                                __mcp::FlowStep::Done(__mcp_r) => {
                                    __mcp::FlowSlot::Done(__mcp_r)
                                }
                                __mcp::FlowStep::Suspended(__mcp_s) => {
                                    return __mcp::suspend_flow(
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
                            let args: Greeting = __mcp_ok(
                                __mcp::stage_args(&mut __mcp_parsed, &__mcp_args),
                                cx,
                            )?;
                            let names: State<Names> = __mcp_ok(
                                <State<Names> as __mcp::FromContext>::from_context(cx),
                                cx,
                            )?;
                            let __mcp_r0 = match __mcp_m0 {
                                __mcp::FlowSlot::Done(__mcp_r) => __mcp_r,
                                __mcp::FlowSlot::Saved(__mcp_site0, __mcp_s) => {
                                    let __mcp_w = if false {
                                        __mcp::Option::Some(ask_name(loop {}))
                                    } else {
                                        __mcp::Option::None
                                    };
                                    match (&&__mcp::autoref::wrap_witness(&__mcp_w))
                                        .ops()
                                        .resume(
                                            cx,
                                            ::core::clone::Clone::clone(&__mcp_site0),
                                            __mcp_s,
                                        )
                                        .await
                                    {
                                        __mcp::FlowStep::Done(__mcp_r) => __mcp_r,
                                        __mcp::FlowStep::Suspended(__mcp_s) => {
                                            return __mcp::suspend_flow(
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
                            return __mcp_finish(
                                Ok(format!("{}, {name}!", args.greeting)),
                            );
                        }
                    }
                }
            }
            __mcp::Box::pin(async move {
                let __mcp_out = __mcp_run(&mut *cx, args, state).await;
                __mcp::to_step(cx, __mcp_out, |__mcp_r| Self::__mcp_done(__mcp_r, ""))
            })
        }
        fn direct<'a>(
            &'a self,
            cx: &'a mut __mcp::ToolContext,
            args: __mcp::Value,
        ) -> __mcp::Option<
            __mcp::BoxFuture<'a, __mcp::Result<__mcp::CallToolResult, __mcp::ToolError>>,
        > {
            (&__mcp::autoref::DirectWrap::new(
                Self::__mcp_direct(cx, args, __mcp::String::new()),
            ))
                .boxed()
        }
    }
};
